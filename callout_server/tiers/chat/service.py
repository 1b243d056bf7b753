"""The chat tier: per-call sessions, streamed turns, barge-in, tool outputs, idle expiry.

    chat = ChatService(llm, active_config, settings.chat, recorder, locale)
    await chat.start()                         # the idle-session sweeper
    view = chat.create_session(SessionCreate(...))
    run = chat.start_turn(call_id, TurnRequest(...))     # validation errors raise here
    async for frame in run.events(): ...                  # SSE bytes, `end` last
    chat.cancel(call_id, turn_id)                         # barge-in from another request
    run = chat.submit_tool_output(call_id, ToolOutputRequest(...))   # None unless respond
    await chat.stop()

Everything here runs on the event loop without blocking: no database on the hot path (the
model configuration comes from the in-memory `active_config()`, diagnostics go to the
recorder's queue). Each model call, compaction included, is recorded once.

Turn rules (the contract's, plus what it leaves open):
- a new `turn_id` supersedes the generation in flight and appends the user message;
- the same `turn_id` with a higher `revision` supersedes it and replaces that user message
  in place (never a duplicate); the same or a lower revision is a 409 `stale_revision`;
  a revision of a turn older than the newest is a 409 `stale_turn`;
- `cancel` stops the generation in flight (if `turn_id` is given, only that turn's);
- a tool output with `respond: true` supersedes the generation in flight and starts the
  continuation of the turn that made the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from callout_server.calllog.reports import NULL_RECORDER, Recorder, record_call
from callout_server.config.settings import ChatSettings
from callout_server.i18n import current, msg
from callout_server.lexicons.book import EMPTY, LexiconBook
from callout_server.lexicons.errors import UnknownLexicons
from callout_server.llm import Diagnostic, LLMCallError, LLMClient, LLMConfig, Locale
from callout_server.tiers.chat.compaction import SUMMARY_MAX_TOKENS, summary_messages
from callout_server.tiers.chat.errors import (
    SessionExists,
    SessionNotFound,
    StaleTurn,
    TooManySessions,
    UnknownToolCall,
)
from callout_server.tiers.chat.filler import FillerPlan
from callout_server.tiers.chat.guard import SpeechGuard
from callout_server.tiers.chat.history import ChatHistory, Summariser
from callout_server.tiers.chat.schemas import (
    SessionCreate,
    SessionView,
    ToolOutputRequest,
    TurnRequest,
)
from callout_server.tiers.chat.session import ChatSession
from callout_server.tiers.chat.session_bus import ChatBus
from callout_server.tiers.chat.session_state import restore
from callout_server.tiers.chat.session_store import SessionStore
from callout_server.tiers.chat.shared import SharedSessions
from callout_server.tiers.chat.turn import TurnRun
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.upstream import CallReport, PoolStream, Route, UpstreamError, Upstreams

log = logging.getLogger(__name__)

STOP_GRACE_S = 2.0  # shutdown: how long to let stopped runs close their upstream requests


class ChatService:
    def __init__(
        self,
        llm: Upstreams | LLMClient,
        active_config: Callable[[], LLMConfig | Route],
        settings: ChatSettings,
        recorder: Recorder = NULL_RECORDER,
        locale: Locale = "zh",
        lexicons: Callable[[], LexiconBook] = lambda: EMPTY,  # the live ones (memory only)
        split: Callable[[Route, str | None], Route] | None = None,
    ) -> None:
        self._lexicons = lexicons
        # A running canary's split (canary/split.py): the route for a call's call_id.
        self._split = split
        self._upstreams = llm if isinstance(llm, Upstreams) else Upstreams(llm)
        self._active_config = active_config
        self.settings = settings
        self._recorder = recorder
        self._locale: Locale = locale
        self.sessions: dict[str, ChatSession] = {}
        self._footprints: dict[str, int] = {}  # bytes each session holds (SessionCreate.footprint)
        self.held_bytes = 0
        self._sweeper: asyncio.Task[None] | None = None
        self._stopping: set[TurnRun] = set()  # stopped runs still closing their upstream
        self.shared: SharedSessions | None = None  # sessions in Redis (shared.py)

    def share(self, store: SessionStore, bus: ChatBus, lease_s: float) -> None:
        """Keep sessions in `store` between turns, so that any worker serves any turn."""
        self.shared = SharedSessions(self, store, bus, lease_s)

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep_loop(), name="chat-session-sweeper")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self.shared is not None:  # the turns end_all() stopped are saved for the next
            await self.shared.drain()
        for call_id in list(self.sessions):
            self._drop(call_id)
        await self.drain(STOP_GRACE_S)

    def end_all(self) -> None:
        """Shutdown has begun: every turn in flight ends now (`end` reason `cancelled`, the
        upstream request closed); the sessions stay until `stop()`."""
        for session in list(self.sessions.values()):
            self._track(session.stop_run("cancelled"))

    async def drain(self, timeout_s: float = STOP_GRACE_S) -> None:
        """Wait (bounded) until stopped runs have closed their upstream requests."""
        tasks = {r.task for r in self._stopping if r.task is not None and not r.task.done()}
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    @property
    def sweep_interval_s(self) -> float:
        return min(30.0, max(0.05, self.settings.session_ttl_s / 4))

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_interval_s)
            try:
                self.expire_idle()
            except Exception:  # the sweeper must survive anything, or memory grows all day
                log.exception("chat session sweep failed")

    def expire_idle(self, now: float | None = None) -> int:
        """Drop sessions idle for longer than the TTL; one in response is never idle."""
        now = time.monotonic() if now is None else now
        ttl = self.settings.session_ttl_s
        expired = [cid for cid, s in self.sessions.items()
                   if not s.in_response and s.idle_for(now) > ttl]
        for call_id in expired:
            self._drop(call_id)
        if expired:
            log.info("chat sessions expired", extra={"count": len(expired)})
        return len(expired)

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, req: SessionCreate, source: str = "live",
                       route: Route | None = None) -> SessionView:
        """`source` and `route`: the console's playground (its configuration of choice)."""
        if req.call_id in self.sessions:
            raise SessionExists(req.call_id)
        if len(self.sessions) >= self.settings.max_sessions:
            # Memory is bounded by the idle TTL; this bounds a burst before the sweep runs.
            raise TooManySessions(self.settings.max_sessions)
        missing = self._lexicons().missing(req.guard.lexicons) if req.guard else []
        if missing:  # a guard that silently checked nothing would be worse than none
            raise UnknownLexicons(missing)
        footprint = req.footprint()
        if self.held_bytes + footprint > self.settings.max_sessions_bytes:
            raise TooManySessions(self.settings.max_sessions_bytes, in_bytes=True)
        apology = self.settings.timeout_apology if req.timeout_apology is None \
            else req.timeout_apology
        return self.view(self._build(req, source, route, apology, footprint))

    def _build(self, req: SessionCreate, source: str, route: Route | None, apology: str,
               footprint: int) -> ChatSession:
        summarise = self._summariser(req.call_id) if req.compact_history else None
        history = ChatHistory(req.system_prompt or None, size=req.history_turns,
                              compact_history=req.compact_history, summarise=summarise)
        session = ChatSession(req.call_id, history, tools=[t.to_request() for t in req.tools],
                              overrides=req.overrides, apology=apology, source=source,
                              route=route, spec=req,
                              guard=SpeechGuard(req.guard, self._lexicons) if req.guard else None,
                              filler=FillerPlan(req.filler) if req.filler else None)
        self.sessions[req.call_id] = session
        self._footprints[req.call_id] = footprint
        self.held_bytes += footprint
        return session

    def restore_session(self, call_id: str, settings: dict[str, Any],
                        turns: dict[str, Any]) -> ChatSession:
        """A session of the shared store, as this worker's copy (shared.py)."""
        req = SessionCreate.model_validate(settings["spec"])
        session = self._build(req, settings["source"], None, settings["apology"],
                              req.footprint())
        return restore(session, turns)

    def get(self, call_id: str) -> ChatSession:
        session = self.sessions.get(call_id)
        if session is None:
            raise SessionNotFound(call_id)
        return session

    def view(self, session: ChatSession) -> SessionView:
        history = session.history
        ttl_left = self.settings.session_ttl_s - (0 if session.in_response else session.idle_for())
        return SessionView(
            call_id=session.call_id, in_response=session.in_response, turn_id=session.turn_id,
            history_turns=history.size, compact_history=history.compact_history,
            tools=[t["name"] for t in session.tools], pending_call_ids=history.pending_call_ids,
            summary=history.summary, history=history.to_public(),
            idle_expires_in_s=round(max(0.0, ttl_left), 3),
            guard=session.guard.spec if session.guard else None,
            filler=session.filler.spec if session.filler else None)

    def get_view(self, call_id: str) -> SessionView:
        return self.view(self.get(call_id))

    def delete_session(self, call_id: str) -> None:
        """End the session: its stream ends (`cancelled`) and its upstream request closes."""
        self.get(call_id)
        self._drop(call_id)

    def forget_calls(self, erased: Callable[[str | None], bool]) -> int:
        """Drop the sessions of erased calls (`DELETE /api/admin/calls/{call_id}`)."""
        gone = [call_id for call_id in self.sessions if erased(call_id)]
        for call_id in gone:
            self._drop(call_id)
        return len(gone)

    def _drop(self, call_id: str) -> None:
        session = self.sessions.pop(call_id, None)
        self.held_bytes -= self._footprints.pop(call_id, 0)
        if session is not None:
            self._track(session.close())
        if self.shared is not None:
            self.shared.dropped(call_id)

    def _track(self, run: TurnRun | None) -> None:
        if run is not None and run.task is not None and not run.task.done():
            self._stopping.add(run)
            run.task.add_done_callback(lambda _t: self._stopping.discard(run))

    # -- turns ----------------------------------------------------------------------------

    def start_turn(self, call_id: str, req: TurnRequest) -> TurnRun:
        session = self.get(call_id)
        history = session.history
        known = session.revisions.get(req.turn_id)
        if known is not None:
            if req.turn_id != session.turn_id:
                raise StaleTurn(msg("stale_turn", turn_id=req.turn_id), code="stale_turn")
            if req.revision <= known:
                raise StaleTurn(msg("stale_revision", turn_id=req.turn_id, revision=req.revision,
                                    known=known))
        self._track(session.stop_run("superseded"))
        # A newer revision replaces its message in place; one evicted meanwhile is re-added.
        history.add_user_message(req.turn_id, req.text, req.revision)
        session.begin_turn(req.turn_id, req.revision)
        return self._start_run(session, req.turn_id, req.output)

    def cancel(self, call_id: str, turn_id: str | None = None) -> bool:
        """Stop the generation in flight; False when there was none (still a 204)."""
        session = self.get(call_id)
        session.touch()
        run = session.run
        if run is None or (turn_id is not None and run.turn_id != turn_id):
            return False
        self._track(session.stop_run("cancelled"))
        return True

    def submit_tool_output(self, call_id: str, req: ToolOutputRequest) -> TurnRun | None:
        session = self.get(call_id)
        session.touch()
        history = session.history
        if req.call_id not in history.pending_call_ids:
            raise UnknownToolCall(req.call_id)
        if req.respond:
            self._track(session.stop_run("superseded"))
        history.append_tool_output(req.call_id, req.output_text())  # re-injects if evicted
        turn_id, output = session.call_turns.pop(req.call_id, (session.turn_id or "", "audio"))
        if not req.respond:
            return None
        return self._start_run(session, turn_id, output)

    def _start_run(self, session: ChatSession, turn_id: str, output: str) -> TurnRun:
        settings = self.settings

        def open_stream() -> PoolStream:
            # Inside the producer: a failing config lookup ends the stream with `error`.
            route = session.route or self._live_route(session.call_id)
            req = session.overrides.apply(session.history.to_messages(), tools=session.tools,
                                          default_thinking=THINKING_DEFAULT["chat"])
            if req.timeout_s is None:
                req = dataclasses.replace(req, timeout_s=settings.total_timeout_s)
            # Fails over (another endpoint, then the fallbacks) only before the first event.
            return self._upstreams.stream(route, req, ttft_timeout_s=settings.ttft_timeout_s,
                                          read_timeout_s=settings.read_timeout_s)

        run = TurnRun(
            session.history, call_id=session.call_id, turn_id=turn_id, output=output,
            progress=session.progress_of(turn_id), open_stream=open_stream,
            record=lambda report, speech: self._record(report, session.call_id,
                                                       source=session.source, speech=speech),
            on_tool_call=session.note_tool_call, on_end=lambda r: self._ended(session, r),
            batch_sentences=settings.batch_sentences,
            first_clause_min_chars=settings.first_clause_min_chars, apology=session.apology,
            locale=current(self._locale), guard=session.guard, filler=session.filler,
            max_unread_bytes=settings.max_unread_bytes)
        session.attach(run)
        run.start()
        return run

    def _live_route(self, call_id: str) -> Route:
        """The active configuration's route, or a running canary's for this call: every
        turn of one phone call (and its compaction) on the same side, on any worker."""
        route = Route.of(self._active_config())
        return route if self._split is None else self._split(route, call_id)

    def _ended(self, session: ChatSession, run: TurnRun) -> None:
        session.release(run)
        if self.shared is not None:
            self.shared.ended(session)  # saved for the next turn, on any worker

    # -- compaction and diagnostics -------------------------------------------------------

    def _summariser(self, call_id: str) -> Summariser:
        async def summarise(messages: list[dict[str, Any]]) -> str:
            session = self.sessions.get(call_id)
            if session is None:  # deleted meanwhile: the history discards the result anyway
                raise RuntimeError("chat session closed")
            route = session.route or self._live_route(session.call_id)
            # The session's dialect switches (thinking, extra_params) apply; size and
            # temperature are the summary's own.
            req = dataclasses.replace(
                session.overrides.apply(summary_messages(messages, self._locale),
                                        default_thinking=THINKING_DEFAULT["chat"]),
                max_tokens=SUMMARY_MAX_TOKENS, temperature=0.2,
                timeout_s=self.settings.total_timeout_s)
            call = self._upstreams.call(route)
            try:
                served = await call.complete(req)
            except UpstreamError as exc:
                self._record(exc.report, call_id, "compaction")
                raise
            except asyncio.CancelledError:  # the session was reset or closed meanwhile
                self._record(call.report(Diagnostic.make("cancelled", self._locale)), call_id,
                             "compaction")
                raise
            self._record(served.report, call_id, "compaction")
            done = served.value
            if done.diagnostic is not None:  # a cut summary would lose facts silently
                raise LLMCallError(done.diagnostic)
            return done.text

        return summarise

    def _record(self, report: CallReport, call_id: str, node_id: str | None = None,
                source: str | None = None, speech: dict[str, Any] | None = None) -> None:
        if source is None:  # the session's, while it is there (a compaction's)
            session = self.sessions.get(call_id)
            source = session.source if session is not None else "live"
        record_call(self._recorder, report, "chat", call_id=call_id, node_id=node_id,
                    source=source, speech=speech)
