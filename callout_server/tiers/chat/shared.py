"""Chat sessions shared by every worker: the turn lease, loads and saves, requests to the holder.

    shared = SharedSessions(service, store, bus, lease_s)     # ChatService.share(...)
    session = await shared.claim(call_id, "superseded")       # this worker may run a turn
    shared.ended(session)                                     # a run ended: save, release
    reply = await shared.handle(message)                      # the bus, on the holder

A turn runs on the worker that received it. To start one (a turn, a tool output's
continuation) a worker takes the call's lease; while another worker holds it (a turn
streaming there), it asks that worker to yield (`cancel`, `superseded`): the holder stops
its run at once, saves the session (what was said stays in the history, as on one worker)
and releases the lease, then answers; the asker takes the lease and loads the session. A
holder that does not answer (gone: nobody listens on its channel, or silent for
`YIELD_TIMEOUT_S`) is presumed dead and its lease is taken over: its in-flight turn is
lost, the history is the one saved after the last turn that ended. With the lease held,
the session is loaded when the stored version is newer than this worker's copy (one round
trip; a decrypt only then): only its turns into a copy this worker has (the settings, the
bulk of a session, cross once per worker and call), the whole session otherwise. When the
run ends it is saved and the lease released, in one script that accepts only the lease's
holder. The same worker's own new turn reuses its lease and stops the run in process:
barge-in stays instant.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol

from callout_server.tiers.chat.errors import SessionNotFound, UnknownToolCall
from callout_server.tiers.chat.schemas import ToolOutputRequest
from callout_server.tiers.chat.session import ChatSession
from callout_server.tiers.chat.session_bus import ChatBus, Message
from callout_server.tiers.chat.session_state import dump_turns, restore
from callout_server.tiers.chat.session_store import NOTHING, Known, SessionStore, Stored
from callout_server.tiers.chat.turn import TurnRun

log = logging.getLogger(__name__)

YIELD_TIMEOUT_S = 0.5  # a holder silent for this long is presumed dead


class Host(Protocol):
    """What of `ChatService` this module uses (it holds the sessions' copies)."""

    sessions: dict[str, ChatSession]

    def _drop(self, call_id: str) -> None: ...
    def _track(self, run: TurnRun | None) -> None: ...
    def restore_session(self, call_id: str, settings: dict[str, Any],
                        turns: dict[str, Any]) -> ChatSession: ...
    def submit_tool_output(self, call_id: str, req: ToolOutputRequest) -> TurnRun | None: ...


class _CallLock:
    """A call's lock and how many tasks hold or wait for it. It is forgotten only when
    none do: a waiter woken on a lock that a newcomer no longer finds (and so replaces)
    would run beside that newcomer."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


def worker_id() -> str:
    return f"{os.uname().nodename}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class SharedSessions:
    def __init__(self, service: Host, store: SessionStore, bus: ChatBus,
                 lease_s: float) -> None:
        self._service = service
        self.store = store
        self.bus = bus
        self._lease_s = lease_s
        self._locks: dict[str, _CallLock] = {}  # only while used, or the call's copy is here
        self._saves: set[asyncio.Task[None]] = set()
        self._pending: dict[str, asyncio.Task[None]] = {}  # call id -> its latest save

    @property
    def worker(self) -> str:
        return self.bus.worker

    @contextlib.asynccontextmanager
    async def _locked(self, call_id: str) -> AsyncIterator[None]:
        entry = self._locks.get(call_id)
        if entry is None:
            entry = self._locks[call_id] = _CallLock()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            # Nobody left and no copy here (a claim of an unknown call, one whose store
            # failed, a copy dropped meanwhile): it guards nothing, and would stay for good.
            if entry.users == 0 and call_id not in self._service.sessions \
                    and self._locks.get(call_id) is entry:
                del self._locks[call_id]

    # -- taking a call's lease -------------------------------------------------------------

    async def claim(self, call_id: str, reason: str) -> ChatSession:
        """Hold the lease of `call_id` on this worker, with its newest state loaded."""
        async with self._locked(call_id):  # a save of this worker's goes first
            local = self._service.sessions.get(call_id)
            if local is not None and local.lease is not None and not local.closed:
                return local  # our turn is running: start_turn stops it in process
        token = f"{self.worker}:{uuid.uuid4().hex[:12]}"
        known = self._known(call_id)
        stored: Stored | None = None
        for _ in range(20):
            taken = await self.store.take(call_id, token, self._lease_s, known)
            if taken is None:
                self._gone(call_id)
            if isinstance(taken, Stored):
                stored = taken
                break
            assert taken is not None  # the holder of the lease: another turn of the call
            worker = taken.rsplit(":", 1)[0]
            answer = None if worker == self.worker else await self.bus.ask(
                worker, {"op": "yield", "call_id": call_id, "reason": reason}, YIELD_TIMEOUT_S)
            if answer is None:  # gone (or our own leftover): its in-flight turn is lost
                log.warning("chat: a turn lease's holder did not answer; taking it over")
                break
        try:
            if stored is None:  # taken over: what was saved after the last turn
                await self.store.acquire(call_id, token, self._lease_s, force=True)
                session = await self._load(call_id, known)
            else:
                session = self._adopt(call_id, stored)
        except BaseException:
            await self.store.release(call_id, token)
            raise
        session.lease = token
        return session

    def _known(self, call_id: str) -> Known:
        local = self._service.sessions.get(call_id)
        return (local.sid, local.version) if local is not None else NOTHING

    def _gone(self, call_id: str) -> None:
        if call_id in self._service.sessions:
            self._service._drop(call_id)
        raise SessionNotFound(call_id)

    def _adopt(self, call_id: str, stored: Stored) -> ChatSession:
        """The copy to run on: ours, brought up to the stored turns when they are newer, or
        the stored session built afresh (this worker has none, or one of an older session
        of the same call id)."""
        service = self._service
        local = service.sessions.get(call_id)
        if local is not None and stored.settings is None:
            if stored.turns is not None:
                service._track(local.stop_run("superseded"))  # a run whose lease was lost
                restore(local, stored.turns)
                local.version = stored.version
            return local
        assert stored.settings is not None and stored.turns is not None
        if local is not None:
            service._drop(call_id)
        session = service.restore_session(call_id, stored.settings, stored.turns)
        session.version, session.sid = stored.version, stored.sid
        return session

    async def _load(self, call_id: str, known: Known) -> ChatSession:
        stored = await self.store.load(call_id, known)
        if stored is None:
            self._gone(call_id)
        assert stored is not None
        return self._adopt(call_id, stored)

    async def release_unused(self, session: ChatSession) -> None:
        """A claim that started no run (a stale turn, a tool output without `respond`)."""
        if session.run is None and session.lease is not None:
            token, session.lease = session.lease, None
            await self.store.release(call_id=session.call_id, token=token)

    async def fresh(self, call_id: str) -> ChatSession:
        """This worker's copy of the session, loaded again if the stored one is newer."""
        service = self._service
        local = service.sessions.get(call_id)
        if local is not None and local.lease is not None:
            return local  # we hold it: ours is the newest
        return await self._load(call_id, self._known(call_id))

    # -- after a run -------------------------------------------------------------------------

    def ended(self, session: ChatSession) -> None:
        """A run ended (any reason): save what the history now holds, release the lease."""
        if session.lease is None or session.closed:
            return
        state = dump_turns(session)  # as the run left it, before a newer turn changes it
        task = asyncio.create_task(self._save(session, state))
        self._saves.add(task)
        self._pending[session.call_id] = task
        task.add_done_callback(lambda t: self._settled(session.call_id, t))

    def _settled(self, call_id: str, task: asyncio.Task[None]) -> None:
        self._saves.discard(task)
        if self._pending.get(call_id) is task:
            del self._pending[call_id]

    def dropped(self, call_id: str) -> None:
        """This worker's copy is gone (deleted, expired, erased): so is its lock."""
        entry = self._locks.get(call_id)
        if entry is not None and entry.users == 0:  # else its last user forgets it
            del self._locks[call_id]

    async def save_now(self, session: ChatSession) -> None:
        await self._save(session, dump_turns(session))

    async def _save(self, session: ChatSession, state: dict[str, Any]) -> None:
        async with self._locked(session.call_id):
            token = session.lease
            if token is None:
                return
            release = session.run is None  # a newer run of ours saves (and releases) itself
            try:
                version = await self.store.save(session.call_id, session.sid, state, token,
                                                release=release)
            except Exception as exc:  # Redis away: the next turn loads the last saved state
                log.warning("chat: saving a session failed (%s)", type(exc).__name__)
                version = None
            if version is None:
                session.lease = None  # taken over (we were presumed dead) or deleted
                return
            session.version = version
            if release:
                session.lease = None

    async def drain(self) -> None:
        if self._saves:
            await asyncio.wait(set(self._saves), timeout=2.0)

    # -- on the holder: requests from other workers ------------------------------------------

    async def handle(self, message: Message) -> Message:
        call_id = str(message.get("call_id"))
        session = self._service.sessions.get(call_id)
        if session is None or session.lease is None:
            return {"result": "yielded"}
        if message.get("op") == "tool":
            if session.run is None:
                return {"result": "yielded"}
            try:
                self._service.submit_tool_output(call_id, ToolOutputRequest(
                    call_id=message["tool_call_id"], output=message["output"], respond=False))
            except UnknownToolCall:
                return {"result": "unknown_call_id"}
            return {"result": "applied"}
        run = session.run
        turn_id = message.get("turn_id")
        if run is not None and turn_id is not None and run.turn_id != turn_id:
            return {"result": "noop"}  # a cancel of a turn that is not the running one
        self._service._track(session.stop_run(str(message.get("reason") or "cancelled")))
        save = self._pending.get(call_id)  # the stopped run's save, scheduled as it ended
        if save is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(save), YIELD_TIMEOUT_S)
        return {"result": "yielded"}

    async def _holder_elsewhere(self, call_id: str) -> str | None:
        """The other worker whose turn of the call holds its lease; None: no turn runs, or
        it runs here."""
        holder = await self.store.holder(call_id)
        if holder is None:
            return None
        worker = holder.rsplit(":", 1)[0]
        return None if worker == self.worker else worker

    async def forward_tool_output(self, call_id: str, req: ToolOutputRequest) -> str | None:
        """A tool output without `respond` while another worker runs the call's turn: that
        worker applies it. None: no turn is running elsewhere (apply it here)."""
        worker = await self._holder_elsewhere(call_id)
        if worker is None:
            return None
        answer = await self.bus.ask(worker, {"op": "tool", "call_id": call_id,
                                             "tool_call_id": req.call_id,
                                             "output": req.output}, YIELD_TIMEOUT_S)
        result = answer.get("result") if answer else None
        return result if result in ("applied", "unknown_call_id") else None

    async def cancel_elsewhere(self, call_id: str, turn_id: str | None) -> bool | None:
        """`cancel` on a worker that runs no turn of the call: ask the holder. None: no
        turn runs anywhere."""
        worker = await self._holder_elsewhere(call_id)
        if worker is None:
            return None
        answer = await self.bus.ask(worker, {"op": "yield", "call_id": call_id,
                                             "reason": "cancelled", "turn_id": turn_id},
                                    YIELD_TIMEOUT_S)
        return answer is not None and answer.get("result") == "yielded"
