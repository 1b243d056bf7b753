"""Request bodies and answers of `/api/admin/evaluations` (the contract's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from callout_server.validation import INT4_MAX, RequestModel, UtcDatetime

Status = Literal["running", "done", "cancelled", "failed"]


class EvaluationCreate(RequestModel):
    candidate_id: int = Field(ge=1, le=INT4_MAX)
    since: UtcDatetime | None = None
    node_id: str | None = Field(None, min_length=1, max_length=200)
    limit: int = Field(500, ge=1, le=100_000)


class Started(BaseModel):
    id: int
    status: Status


class Progress(BaseModel):
    done: int
    total: int


class EvaluationOut(BaseModel):
    """One evaluation; `summary` is the comparison so far while it runs."""

    id: int
    status: Status
    candidate_id: int
    candidate: dict[str, Any]  # {"name", "model"} as they were when it started
    created_by: str | None
    created_at: datetime
    finished_at: datetime | None
    reason: str | None
    filter: dict[str, Any]  # {"since", "node_id", "limit"}
    progress: Progress
    summary: dict[str, Any] | None = None
    disagreements: list[dict[str, Any]] | None = None
    disagreements_next: int | None = None


class EvaluationList(BaseModel):
    items: list[EvaluationOut]


class DisagreementPage(BaseModel):
    items: list[dict[str, Any]]
    next_after: int | None


class RecordedNode(BaseModel):
    node_id: str
    calls: int  # recorded NLU calls kept for replay


class RecordedNodes(BaseModel):
    items: list[RecordedNode]
