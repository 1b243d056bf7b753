"""`POST /api/nlu/decide` and `POST /api/nlu/screen`: the dialer workers' routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from callout_server.api.deps import provide
from callout_server.api.edge import received_at
from callout_server.api.lean import LeanJsonRoute
from callout_server.auth.deps import Principal, require_service
from callout_server.tiers.nlu.schemas import DecideRequest, Decision, Screened, ScreenRequest
from callout_server.tiers.nlu.screen import ScreenService
from callout_server.tiers.nlu.service import NluService

# The common request is served without FastAPI's per-request machinery (api/lean.py).
router = APIRouter(prefix="/api/nlu", tags=["nlu"], route_class=LeanJsonRoute)

_ERROR = {"description": "model call failed, no fallback_intent: the diagnostic is in the error body"}


@router.post("/decide", responses={401: {}, 403: {}, 422: {}, 502: _ERROR, 504: _ERROR})
async def decide(
    body: DecideRequest,
    nlu: Annotated[NluService, Depends(provide(NluService))],
    _: Annotated[Principal, Depends(require_service)],
    arrived: Annotated[float | None, Depends(received_at)],
) -> Decision:
    return await nlu.decide(body, received_at=arrived)


@router.post("/screen", responses={401: {}, 403: {}, 422: {}})
async def screen(
    body: ScreenRequest,
    screening: Annotated[ScreenService, Depends(provide(ScreenService))],
    _: Annotated[Principal, Depends(require_service)],
    arrived: Annotated[float | None, Depends(received_at)],
) -> Screened:
    """Who answered the line: the rules first (no model call), else the model within
    `deadline_ms`; a model failure answers `unknown` (`source: "fallback"`), never a 5xx."""
    return await screening.screen(body, received_at=arrived)
