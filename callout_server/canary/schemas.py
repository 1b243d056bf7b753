"""Request bodies and answers of `/api/admin/canaries` (the contract's shapes).

Rates are fractions (0-1); latencies in milliseconds; `percent` is the canary's share of
live calls (0.01 % steps).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from callout_server.validation import INT4_MAX, RequestModel

Status = Literal["running", "promoted", "stopped", "rolled_back"]


class RollbackLimits(RequestModel):
    """Limits on the canary side; a limit left out is not watched. None is checked before
    `min_calls` calls have reached the canary side (counted over all workers)."""

    max_fallback_rate: float | None = Field(None, ge=0, le=1)
    max_error_rate: float | None = Field(None, ge=0, le=1)
    max_p95_ms: float | None = Field(None, gt=0, le=600_000)
    min_calls: int = Field(ge=1, le=1_000_000)


class CanaryCreate(RequestModel):
    candidate_id: int = Field(ge=1, le=INT4_MAX)
    percent: float = Field(ge=0.01, le=100)  # kept to 0.01 (the split counts basis points)
    rollback: RollbackLimits


class SideFigures(BaseModel):
    """One side's decisions since the canary started (live traffic, every worker)."""

    calls: int = 0
    fallbacks: int = 0  # decisions the model did not give (the dialer got its fallback)
    errors: int = 0  # decisions whose endpoints failed (timeouts, upstream and connect errors)
    fallback_rate: float | None = None
    error_rate: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    codes: dict[str, int] = Field(default_factory=dict)


class Agreement(BaseModel):
    """How alike the two sides decide on the nodes both answered: per node the overlap of
    their intent distributions (1: the same shares), weighted by the canary's decisions."""

    intent: float | None = None
    nodes: int = 0  # nodes compared
    calls: int = 0  # canary decisions on those nodes


class Figures(BaseModel):
    active: SideFigures
    canary: SideFigures
    agreement: Agreement
    at: datetime  # when they were computed


class Reason(BaseModel):
    limit: Literal["fallback_rate", "error_rate", "p95_ms"]
    value: float
    max: float
    calls: int
    message: str  # worded in the reader's language


class ConfigRef(BaseModel):
    id: int | None
    name: str | None = None
    model: str | None = None


class CanaryOut(BaseModel):
    id: int
    tier: str
    status: Status
    candidate: ConfigRef
    active: ConfigRef  # what served the tier when the canary started
    percent: float
    rollback: dict[str, Any]
    started_at: datetime
    started_by: str | None
    ended_at: datetime | None
    ended_by: str | None
    reason: Reason | None
    figures: Figures


class CanaryList(BaseModel):
    items: list[CanaryOut]
