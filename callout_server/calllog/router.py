"""Ops' reads of the call log: `GET /api/admin/diagnostics` and `/summary`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from callout_server.api.deps import provide
from callout_server.api.params import BeforeId, Since, Until
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.calllog.service import DiagnosticsQueries
from callout_server.i18n import current

router = APIRouter(prefix="/api/admin/diagnostics", tags=["diagnostics"])

Diagnostics = Annotated[DiagnosticsQueries, Depends(provide(DiagnosticsQueries))]
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]


@router.get("", responses={401: {}, 403: {}, 422: {}})
async def list_diagnostics(
    diagnostics: Diagnostics, _: Viewer,
    tier: Literal["nlu", "chat", "script"] | None = None,
    code: Annotated[str | None, Query(max_length=40)] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    call_id: Annotated[str | None, Query(max_length=200)] = None,
    node_id: Annotated[str | None, Query(max_length=200)] = None,
    source: Literal["live", "evaluation"] | None = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: BeforeId = None,
) -> dict[str, Any]:
    return await diagnostics.page(limit=limit, before_id=before_id, since=since, until=until,
                                  locale=current(), tier=tier, code=code, model=model,
                                  call_id=call_id, node_id=node_id, source=source)


@router.get("/summary", responses={401: {}, 403: {}, 422: {}})
async def diagnostics_summary(diagnostics: Diagnostics, _: Viewer,
                              window: str = "1h") -> dict[str, Any]:
    return await diagnostics.summary(window)
