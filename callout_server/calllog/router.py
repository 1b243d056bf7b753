"""Ops' reads of the call log: `GET /api/admin/diagnostics`, `/export` (CSV) and `/summary`;
erasing one call: `DELETE /api/admin/calls/{call_id}` (admins; erasure.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Response
from fastapi.responses import StreamingResponse

from callout_server.api.deps import provide
from callout_server.api.params import BeforeId, Since, Until
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.calllog.erasure import CallErasure
from callout_server.calllog.service import EXPORT_MAX_ROWS, DiagnosticsQueries
from callout_server.db.base import utcnow
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
    source: Literal["live", "evaluation", "playground", "rule"] | None = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: BeforeId = None,
) -> dict[str, Any]:
    return await diagnostics.page(limit=limit, before_id=before_id, since=since, until=until,
                                  locale=current(), tier=tier, code=code, model=model,
                                  call_id=call_id, node_id=node_id, source=source)


_CSV = {"description": "the records as CSV (UTF-8 with a BOM), newest first",
        "content": {"text/csv": {"schema": {"type": "string"}}}}


@router.get("/export", response_class=StreamingResponse,
            responses={200: _CSV, 401: {}, 403: {}, 422: {}})
async def export_diagnostics(
    diagnostics: Diagnostics, _: Viewer,
    tier: Literal["nlu", "chat", "script"] | None = None,
    code: Annotated[str | None, Query(max_length=40)] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    call_id: Annotated[str | None, Query(max_length=200)] = None,
    node_id: Annotated[str | None, Query(max_length=200)] = None,
    source: Literal["live", "evaluation", "playground", "rule"] | None = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, Query(ge=1, le=EXPORT_MAX_ROWS)] = 10_000,
    # A download link cannot send Accept-Language: the console names its language here.
    lang: Literal["zh", "en"] | None = None,
) -> StreamingResponse:
    chunks = await diagnostics.export(max_rows=limit, since=since, until=until,
                                locale=lang or current(), tier=tier, code=code, model=model,
                                call_id=call_id, node_id=node_id, source=source)
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    return StreamingResponse(chunks, media_type="text/csv; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="diagnostics-{stamp}.csv"'})


@router.get("/summary", responses={401: {}, 403: {}, 422: {}})
async def diagnostics_summary(diagnostics: Diagnostics, _: Viewer,
                              window: str = "1h") -> dict[str, Any]:
    return await diagnostics.summary(window)


calls_router = APIRouter(prefix="/api/admin/calls", tags=["calls"])
_ERR = {"model": dict[str, Any]}


@calls_router.delete("/{call_id}", status_code=204,
                     responses={401: _ERR, 403: _ERR, 404: _ERR, 503: _ERR})
async def erase_call(call_id: Annotated[str, Path(min_length=1, max_length=200)],
                     who: Annotated[Principal, Depends(require_role(Role.admin))],
                     erasure: Annotated[CallErasure, Depends(provide(CallErasure))]) -> Response:
    """Every stored row of the call, and its chat session on every worker, gone (audited)."""
    await erasure.erase(call_id, who.actor)
    return Response(status_code=204)
