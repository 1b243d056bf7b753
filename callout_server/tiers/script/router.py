"""`POST /api/scripts/generate` and the drafts' admin routes (`/api/admin/scripts`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import StreamingResponse

from callout_server.api.deps import provide
from callout_server.api.params import BeforeId, RowId
from callout_server.api.sse import sse_response, until_closing
from callout_server.auth.deps import Principal, require_role, require_service
from callout_server.auth.roles import Role
from callout_server.streams import Closing
from callout_server.tiers.script.drafts import DraftStore
from callout_server.tiers.script.schemas import Draft, DraftUpdate, GenerateRequest, GenerateResult
from callout_server.tiers.script.service import ScriptService, cancelled_events

router = APIRouter(tags=["scripts"])
_FAILED = {"description": "generation failed: the diagnostic is in the error body"}

Scripts = Annotated[ScriptService, Depends(provide(ScriptService))]
Drafts = Annotated[DraftStore, Depends(provide(DraftStore))]
ShuttingDown = Annotated[Closing, Depends(provide(Closing))]
# Viewers read drafts; operators edit them.
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]


@router.post("/api/scripts/generate", response_model=None,
             responses={401: {}, 422: {}, 502: _FAILED, 504: _FAILED,
                        200: {"content": {"text/event-stream": {}}}})
async def generate(body: GenerateRequest, scripts: Scripts, closing: ShuttingDown,
                   who: Annotated[Principal, Depends(require_service)],
                   ) -> GenerateResult | StreamingResponse:
    if body.stream:  # at shutdown the stream ends at once, `end` reason `cancelled`
        return sse_response(until_closing(scripts.stream(body, who.actor), closing,
                                          cancelled_events))
    return await scripts.generate(body, who.actor)


@router.get("/api/admin/scripts", responses={401: {}, 403: {}})
async def list_drafts(drafts: Drafts, _: Viewer,
                      limit: Annotated[int, Query(ge=1, le=200)] = 50,
                      before_id: BeforeId = None) -> dict[str, Any]:
    items = await drafts.list(limit=limit, before_id=before_id)
    return {"items": items, "next_before_id": items[-1].id if len(items) == limit else None}


@router.get("/api/admin/scripts/{draft_id}", responses={401: {}, 403: {}, 404: {}})
async def get_draft(draft_id: RowId, drafts: Drafts, _: Viewer) -> Draft:
    return await drafts.get(draft_id)


@router.put("/api/admin/scripts/{draft_id}",
            responses={401: {}, 403: {}, 404: {}, 409: {}, 422: {}})
async def update_draft(draft_id: RowId, body: DraftUpdate, drafts: Drafts,
                       who: Operator) -> Draft:
    return await drafts.update(draft_id, body, who.actor)


@router.delete("/api/admin/scripts/{draft_id}", status_code=204,
               responses={401: {}, 403: {}, 404: {}})
async def delete_draft(draft_id: RowId, drafts: Drafts, who: Operator) -> Response:
    await drafts.delete(draft_id, who.actor)
    return Response(status_code=204)
