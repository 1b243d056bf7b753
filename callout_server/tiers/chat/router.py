"""`/api/chat/sessions/*`: thin routes over `ChatService`.

Each route is one operation of `calls.py`: on this worker's memory, or with Redis on the
session shared by every worker (any worker serves any request of a call). Streams are plain `StreamingResponse`s; keep `BaseHTTPMiddleware` off
these routes (it buffers and breaks cancellation on client disconnect).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Response
from fastapi.responses import StreamingResponse

from callout_server.api.deps import provide
from callout_server.api.sse import sse_response
from callout_server.auth.deps import Principal, require_service
from callout_server.tiers.chat import calls
from callout_server.tiers.chat.schemas import (
    CancelRequest,
    SessionCreate,
    SessionView,
    ToolOutputRequest,
    TurnRequest,
)
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.chat.turn import TurnRun

router = APIRouter(prefix="/api/chat/sessions", tags=["chat"])

_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "`session_not_found`: unknown, expired or deleted"}}
_STREAM: dict[int | str, dict[str, Any]] = {200: {
    "content": {"text/event-stream": {}},
    "description": "`sentence` | `text_delta` | `tool_call` | `guard` ... `usage`, then exactly "
                   "one `end`",
}}


Chat = Annotated[ChatService, Depends(provide(ChatService))]
Caller = Annotated[Principal, Depends(require_service)]


def _stream(run: TurnRun) -> StreamingResponse:
    return sse_response(run.events())


@router.post("", status_code=201,
             responses={401: {}, 409: {"description": "`session_exists`"}, 422: {}})
async def create_session(body: SessionCreate, chat: Chat, who: Caller) -> SessionView:
    # A console user's session is the playground's: its calls are no live traffic.
    return await calls.create(chat, body, "playground" if who.via == "session" else "live")


@router.post("/{call_id}/turns", response_class=StreamingResponse,
             responses={**_STREAM, **_NOT_FOUND, 401: {}, 422: {},
                        409: {"description": "`stale_revision` / `stale_turn`"}})
async def post_turn(call_id: str, body: TurnRequest, chat: Chat, _: Caller) -> StreamingResponse:
    return _stream(await calls.turn(chat, call_id, body))


@router.post("/{call_id}/cancel", status_code=204, responses={**_NOT_FOUND, 401: {}, 422: {}})
async def cancel(call_id: str, chat: Chat, _: Caller,
                 body: Annotated[CancelRequest | None, Body()] = None) -> Response:
    await calls.cancel(chat, call_id, body.turn_id if body is not None else None)
    return Response(status_code=204)


@router.post("/{call_id}/tool-outputs", status_code=204, response_model=None,
             responses={**_STREAM, **_NOT_FOUND, 401: {}, 422: {},
                        409: {"description": "`unknown_call_id`"}})
async def tool_output(call_id: str, body: ToolOutputRequest, chat: Chat,
                      _: Caller) -> Response:
    run = await calls.tool_output(chat, call_id, body)
    return Response(status_code=204) if run is None else _stream(run)


@router.get("/{call_id}", responses={**_NOT_FOUND, 401: {}})
async def get_session(call_id: str, chat: Chat, _: Caller) -> SessionView:
    return await calls.view(chat, call_id)


@router.delete("/{call_id}", status_code=204, responses={**_NOT_FOUND, 401: {}})
async def delete_session(call_id: str, chat: Chat, _: Caller) -> Response:
    await calls.delete(chat, call_id)
    return Response(status_code=204)
