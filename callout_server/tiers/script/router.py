"""`POST /api/scripts/generate` and the drafts' admin routes (`/api/admin/scripts`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import StreamingResponse

from callout_server.api.deps import Principal, get_services, require_admin, require_service
from callout_server.api.params import BeforeId, RowId
from callout_server.api.sse import SSE_HEADERS
from callout_server.services import Services
from callout_server.tiers.script.schemas import Draft, DraftUpdate, GenerateRequest, GenerateResult

router = APIRouter(tags=["scripts"])
_FAILED = {"description": "generation failed: the diagnostic is in the error body"}


@router.post("/api/scripts/generate", response_model=None,
             responses={401: {}, 422: {}, 502: _FAILED, 504: _FAILED,
                        200: {"content": {"text/event-stream": {}}}})
async def generate(
    body: GenerateRequest,
    services: Annotated[Services, Depends(get_services)],
    who: Annotated[Principal, Depends(require_service)],
) -> GenerateResult | StreamingResponse:
    if body.stream:
        return StreamingResponse(services.scripts.stream(body, who.name),
                                 media_type="text/event-stream", headers=SSE_HEADERS)
    return await services.scripts.generate(body, who.name)


@router.get("/api/admin/scripts", responses={401: {}, 403: {}})
async def list_drafts(
    services: Annotated[Services, Depends(get_services)],
    _: Annotated[Principal, Depends(require_admin)],
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before_id: BeforeId = None,
) -> dict[str, Any]:
    items = await services.scripts.drafts.list(limit=limit, before_id=before_id)
    return {"items": items, "next_before_id": items[-1].id if len(items) == limit else None}


@router.get("/api/admin/scripts/{draft_id}", responses={401: {}, 403: {}, 404: {}})
async def get_draft(
    draft_id: RowId,
    services: Annotated[Services, Depends(get_services)],
    _: Annotated[Principal, Depends(require_admin)],
) -> Draft:
    return await services.scripts.drafts.get(draft_id)


@router.put("/api/admin/scripts/{draft_id}", responses={401: {}, 403: {}, 404: {}, 409: {}, 422: {}})
async def update_draft(
    draft_id: RowId,
    body: DraftUpdate,
    services: Annotated[Services, Depends(get_services)],
    who: Annotated[Principal, Depends(require_admin)],
) -> Draft:
    return await services.scripts.drafts.update(draft_id, body, who.name)


@router.delete("/api/admin/scripts/{draft_id}", status_code=204,
               responses={401: {}, 403: {}, 404: {}})
async def delete_draft(
    draft_id: RowId,
    services: Annotated[Services, Depends(get_services)],
    _: Annotated[Principal, Depends(require_admin)],
) -> Response:
    await services.scripts.drafts.delete(draft_id)
    return Response(status_code=204)
