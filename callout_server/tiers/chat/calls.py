"""What the chat routes call: the same operations in one process and on many workers.

    view = await calls.create(chat, req, source)     # 201
    run = await calls.turn(chat, call_id, req)       # the run's events are the SSE stream
    await calls.cancel(chat, call_id, turn_id)       # 204
    run = await calls.tool_output(chat, call_id, req)   # None: 204
    view = await calls.view(chat, call_id); await calls.delete(chat, call_id)
    held = await calls.forget_shared(chat, keys)     # erasure: the shared copies
    shared = await calls.share_in_redis(chat, url, prefix, box, ttl_s=..., lease_s=...)

Without a shared store (no Redis) each is the `ChatService` method of the same name, on
this worker's memory. With one (shared.py) a session is taken from the store, and a turn's
lease is held while it runs; a playground session with a configuration of its own stays on
the worker that made it (its configuration is that console user's choice, in memory).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from redis.exceptions import RedisError

from callout_server.config.secrets import SecretBox
from callout_server.tiers.chat.errors import SessionExists, SessionStoreDown, UnknownToolCall
from callout_server.tiers.chat.schemas import (
    SessionCreate,
    SessionView,
    ToolOutputRequest,
    TurnRequest,
)
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.chat.session_bus import ChatBus
from callout_server.tiers.chat.session_state import dump_settings, dump_turns
from callout_server.tiers.chat.session_store import RedisSessions
from callout_server.tiers.chat.shared import SharedSessions, worker_id
from callout_server.tiers.chat.turn import TurnRun
from callout_server.upstream import Route

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


def _store_errors(op: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Redis away: a 503 `session_store_unavailable` (with Retry-After), never a 500."""
    @functools.wraps(op)
    async def wrapped(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await op(*args, **kwargs)
        except RedisError as exc:
            log.warning("chat session store unreachable (%s)", type(exc).__name__)
            raise SessionStoreDown() from exc

    return wrapped


def _shared(chat: ChatService, call_id: str) -> SharedSessions | None:
    local = chat.sessions.get(call_id)
    if local is not None and local.route is not None:
        return None  # a playground session with its own configuration: this worker's
    return chat.shared


@_store_errors
async def create(chat: ChatService, req: SessionCreate, source: str = "live",
                 route: Route | None = None) -> SessionView:
    shared = chat.shared
    if shared is None or route is not None:
        return chat.create_session(req, source, route)
    if req.call_id in chat.sessions:  # maybe a copy of a session deleted on another worker
        try:
            await shared.fresh(req.call_id)
        except Exception:
            pass  # gone: fresh() dropped the copy
    view = chat.create_session(req, source, route)
    session = chat.sessions[req.call_id]
    try:
        sid = await shared.store.create(req.call_id, dump_settings(session),
                                        dump_turns(session))
    except BaseException:
        chat._drop(req.call_id)
        raise
    if sid is None:
        chat._drop(req.call_id)
        raise SessionExists(req.call_id)
    session.version, session.sid = 1, sid
    return view


@_store_errors
async def turn(chat: ChatService, call_id: str, req: TurnRequest) -> TurnRun:
    shared = _shared(chat, call_id)
    if shared is None:
        return chat.start_turn(call_id, req)
    session = await shared.claim(call_id, "superseded")
    try:
        return chat.start_turn(call_id, req)
    except BaseException:  # a stale turn or revision: nothing runs, the lease goes back
        await shared.release_unused(session)
        raise


@_store_errors
async def cancel(chat: ChatService, call_id: str, turn_id: str | None) -> bool:
    shared = _shared(chat, call_id)
    local = chat.sessions.get(call_id)
    if shared is None or (local is not None and local.run is not None):
        return chat.cancel(call_id, turn_id)  # the run is here: stopped at once
    stopped = await shared.cancel_elsewhere(call_id, turn_id)
    if stopped is None:  # no turn runs anywhere
        await shared.fresh(call_id)  # 404 when there is no such session
        return False
    return stopped


@_store_errors
async def tool_output(chat: ChatService, call_id: str,
                      req: ToolOutputRequest) -> TurnRun | None:
    shared = _shared(chat, call_id)
    if shared is None:
        return chat.submit_tool_output(call_id, req)
    if not req.respond:  # another worker's running turn takes it without stopping
        local = chat.sessions.get(call_id)
        if local is None or local.lease is None:
            forwarded = await shared.forward_tool_output(call_id, req)
            if forwarded == "applied":
                return None
            if forwarded == "unknown_call_id":
                raise UnknownToolCall(req.call_id)
    session = await shared.claim(call_id, "superseded")
    try:
        run = chat.submit_tool_output(call_id, req)
    except BaseException:
        await shared.release_unused(session)
        raise
    if run is None and session.run is None:
        await shared.save_now(session)  # and the lease goes back
    return run


@_store_errors
async def view(chat: ChatService, call_id: str) -> SessionView:
    shared = _shared(chat, call_id)
    if shared is None:
        return chat.get_view(call_id)
    session = await shared.fresh(call_id)
    out = chat.view(session)
    if not out.in_response and await shared.store.holder(call_id) is not None:
        out.in_response = True  # a turn streams on another worker
    return out


@_store_errors
async def delete(chat: ChatService, call_id: str) -> None:
    shared = _shared(chat, call_id)
    if shared is None:
        chat.delete_session(call_id)
        return
    await shared.claim(call_id, "cancelled")  # a turn running anywhere ends first
    chat._drop(call_id)
    await shared.store.delete(call_id)


async def forget_shared(chat: ChatService, keys: frozenset[str]) -> int:
    """Erasure: the shared copies of the calls stored as `keys` (their leases too)."""
    if chat.shared is None:
        return 0
    held = 0
    for key in keys:
        if await chat.shared.store.delete(key):
            held += 1
    return held


async def share_in_redis(chat: ChatService, redis_url: str, prefix: str, box: SecretBox, *,
                         ttl_s: float, lease_s: float) -> SharedSessions:
    """`chat` keeps its sessions in Redis (`serve` with CALLOUT_REDIS_URL set): the store,
    this worker's channel, listening. Stop with `shared.bus.stop()`, `shared.store.aclose()`."""
    bus = ChatBus(redis_url, prefix, worker_id())
    chat.share(RedisSessions(redis_url, prefix, box, ttl_s), bus, lease_s=lease_s)
    assert chat.shared is not None
    await bus.start(chat.shared.handle)
    return chat.shared
