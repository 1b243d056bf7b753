"""`GET /healthz`: liveness plus what this worker is serving.

Always 200 while the process serves: a "degraded" worker (database or Redis down, or the
call-log writer stalled) still answers calls from its in-memory configuration, so a load
balancer should keep it in rotation. The answer comes from state cached by the background loops: it never waits on
the database or Redis.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    db: Literal["ok", "down"]
    redis: Literal["ok", "down", "disabled"]
    config_generation: int
    # Call-log records dropped because the database was slow or down (queue overflow).
    diagnostics_dropped: int = 0
    # Call-log records the database refused for their data, isolated and dropped.
    diagnostics_rejected: int = 0
    diagnostics_pending: int = 0
    # "stalled": records have waited `[diagnostics] stalled_after_s` with no write succeeding
    # (status is then "degraded").
    diagnostics_writer: Literal["ok", "stalled"] = "ok"
    # Age of the oldest record not yet written (null when none waits).
    diagnostics_oldest_pending_s: float | None = None


@router.get("/healthz", response_model=Health)
async def healthz(request: Request) -> Health:
    return Health.model_validate(await request.app.state.services.health())
