"""Usage and cost for viewers: `GET /api/admin/usage` and `GET /api/admin/calls/{call_id}`.

Its own router, beside the diagnostics one, so other routes on `/api/admin/calls/{call_id}`
(erasure) live in their own modules.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path

from callout_server.api.deps import provide
from callout_server.api.params import Since, Until
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.calllog.usage_queries import GroupBy
from callout_server.calllog.usage_service import UsageQueries
from callout_server.i18n import current

router = APIRouter(prefix="/api/admin", tags=["usage"])

Usage = Annotated[UsageQueries, Depends(provide(UsageQueries))]
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
_ERR = {"model": dict[str, Any]}


@router.get("/usage", responses={401: _ERR, 403: _ERR, 422: _ERR, 503: _ERR})
async def usage(queries: Usage, _: Viewer, group_by: GroupBy = "day", since: Since = None,
                until: Until = None) -> dict[str, Any]:
    return await queries.summary(group_by, since, until)


@router.get("/calls/{call_id}", responses={401: _ERR, 403: _ERR, 404: _ERR, 503: _ERR})
async def call(queries: Usage, _: Viewer,
               call_id: Annotated[str, Path(min_length=1, max_length=200)]) -> dict[str, Any]:
    return await queries.call(call_id, current())
