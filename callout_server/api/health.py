"""`GET /healthz`: liveness plus what this worker is serving.

Always 200 while the process serves: a "degraded" worker (database or Redis down) still
answers calls from its in-memory configuration, so a load balancer should keep it in
rotation. The answer comes from state cached by the background loops: it never waits on
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
    diagnostics_pending: int = 0


@router.get("/healthz", response_model=Health)
async def healthz(request: Request) -> Health:
    return Health.model_validate(await request.app.state.services.health())
