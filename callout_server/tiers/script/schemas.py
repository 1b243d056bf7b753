"""Shapes of script generation and of the drafts' admin routes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from callout_server.tiers.overrides import Overrides
from callout_server.validation import INT4_MAX, RequestModel

# Lengths count after stripping: a whitespace-only brief or title is an empty one (a 422),
# not a prompt with nothing in it or a draft titled "   ".
Brief = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=4000)]
Title = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
NonEmptyTitle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                                 max_length=200)]


class GenerateRequest(RequestModel):
    brief: Brief
    stream: bool = False
    title: Title | None = None  # empty: the brief's first line
    save: bool = True  # keep the result as a draft
    overrides: Overrides = Field(default_factory=Overrides)


class DraftUpdate(RequestModel):
    version: int = Field(ge=1, le=INT4_MAX)
    title: NonEmptyTitle | None = None
    script: str | None = Field(None, min_length=1, max_length=100_000)
    brief: Brief | None = None


class Draft(BaseModel):
    id: int
    title: str
    brief: str
    script: str
    reasoning: str | None
    status: str
    model: str | None
    config_id: int | None
    usage: dict[str, int | None]
    version: int
    created_at: datetime
    updated_at: datetime
    updated_by: str | None


class GenerateResult(BaseModel):
    script: str
    complete: bool
    model: str
    usage: dict[str, int | None]
    diagnostic: dict[str, Any] | None
    draft_id: int | None
    draft_error: str | None = None  # set when the script was generated but not saved
