"""Shapes of script generation and of the drafts' admin routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from callout_server.tiers.overrides import Overrides


class GenerateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    brief: str = Field(min_length=2, max_length=4000)
    stream: bool = False
    title: str | None = Field(None, max_length=200)
    save: bool = True  # keep the result as a draft
    overrides: Overrides = Field(default_factory=Overrides)


class DraftUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    title: str | None = Field(None, min_length=1, max_length=200)
    script: str | None = Field(None, min_length=1, max_length=100_000)
    brief: str | None = Field(None, min_length=2, max_length=4000)


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
