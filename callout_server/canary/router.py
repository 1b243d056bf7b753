"""`/api/admin/canaries*`: thin routes over CanaryService (operators write, viewers read)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from callout_server.api.deps import provide
from callout_server.api.params import RowId
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.canary.schemas import CanaryCreate, CanaryList, CanaryOut
from callout_server.canary.service import CanaryService

router = APIRouter(prefix="/api/admin/canaries", tags=["canary rollout"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR}
Canaries = Annotated[CanaryService, Depends(provide(CanaryService))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]


@router.post("", status_code=201, response_model=CanaryOut,
             responses={**_AUTH, 409: _ERR, 422: _ERR, 503: _ERR})
async def start_canary(body: CanaryCreate, who: Operator, canaries: Canaries) -> CanaryOut:
    """A share of live calls (by call_id) to the candidate; one running canary per tier."""
    return await canaries.start(body, who.actor)


@router.get("", response_model=CanaryList, responses={**_AUTH, 422: _ERR, 503: _ERR})
async def list_canaries(_: Viewer, canaries: Canaries,
                        limit: Annotated[int, Query(ge=1, le=500)] = 50) -> CanaryList:
    return await canaries.list(limit)


@router.get("/{canary_id}", response_model=CanaryOut,
            responses={**_AUTH, 404: _ERR, 422: _ERR, 503: _ERR})
async def get_canary(canary_id: RowId, _: Viewer, canaries: Canaries) -> CanaryOut:
    return await canaries.get(canary_id)


@router.post("/{canary_id}/promote", response_model=CanaryOut,
             responses={**_AUTH, 404: _ERR, 409: _ERR, 422: _ERR, 503: _ERR})
async def promote_canary(canary_id: RowId, who: Operator, canaries: Canaries) -> CanaryOut:
    """Activate the candidate (as activation does) and end the canary, in one write."""
    return await canaries.promote(canary_id, who.actor)


@router.post("/{canary_id}/stop", response_model=CanaryOut,
             responses={**_AUTH, 404: _ERR, 409: _ERR, 422: _ERR, 503: _ERR})
async def stop_canary(canary_id: RowId, who: Operator, canaries: Canaries) -> CanaryOut:
    """End the canary: every call goes to the active configuration again."""
    return await canaries.stop(canary_id, who.actor)
