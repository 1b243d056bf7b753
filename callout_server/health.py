"""`GET /healthz`: liveness plus what this worker is serving.

Always 200 while the process serves: a "degraded" worker (database or Redis down, or the
call-log writer stalled, or behind: dropping records or catching up after an outage) still answers calls from its in-memory configuration, so a load
balancer should keep it in rotation. The answer comes from state cached by the background loops: it never waits on
the database or Redis.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from callout_server.api.deps import provide
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.config.bus import ConfigSync
from callout_server.config.snapshot import ConfigStore
from callout_server.service_keys.limits import KeyLimiter

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
    # "stalled": records have waited `[diagnostics] stalled_after_s` with no write succeeding;
    # "catching_up": records were dropped, or a write failed, since the log was last written
    # up to date (after an outage: until the backlog is written). Status is then "degraded".
    diagnostics_writer: Literal["ok", "catching_up", "stalled"] = "ok"
    # Age of the oldest record not yet written (null when none waits).
    diagnostics_oldest_pending_s: float | None = None
    # Where service-key limits are counted: "redis" (exact across workers), or "local"
    # (Redis away or not configured: each worker allows its share, [service_keys] workers).
    key_limits: Literal["redis", "local"] = "redis"


class HealthCheck:
    """This worker's health from the state its background loops keep: no I/O here."""

    def __init__(self, sync: ConfigSync, store: ConfigStore,
                 recorder: DiagnosticsRecorder, limiter: KeyLimiter | None = None) -> None:
        self._sync = sync
        self._limiter = limiter
        self._store = store
        self._recorder = recorder

    def report(self) -> Health:
        db, redis = self._sync.db_state, self._sync.redis_state
        writer = self._recorder.health()
        # Redis unset ("disabled") is a supported single-node mode, not a degradation.
        ok = db == "ok" and redis != "down" and writer["diagnostics_writer"] == "ok"
        return Health(status="ok" if ok else "degraded", db=db, redis=redis,
                      config_generation=self._store.current.generation,
                      diagnostics_dropped=self._recorder.dropped,
                      diagnostics_rejected=self._recorder.rejected,
                      diagnostics_pending=self._recorder.pending,
                      key_limits=self._limiter.state if self._limiter else "local", **writer)


@router.get("/healthz", response_model=Health)
async def healthz(check: Annotated[HealthCheck, Depends(provide(HealthCheck))]) -> Health:
    return check.report()
