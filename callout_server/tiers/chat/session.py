"""One call's chat state: its bounded history, its settings and the generation in flight.

A session lives in the memory of the worker that created it, and with Redis also in the
shared store between turns (session_store.py, session_state.py), so any worker can serve
the next turn (docs/workers.md). At most one generation (`run`) is in flight; starting
another, cancelling, deleting or expiring the session stops it first. The session owns its
runs and the turn's progress (`TurnProgress`: shared by a turn's first run and its
continuations, started over by a new turn or revision); a run knows nothing of the session
and reports its end (`release`, its `on_end`), whatever the way, so `in_response` cannot
stay set.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from callout_server.tiers.chat.filler import FillerPlan
from callout_server.tiers.chat.guard import SpeechGuard
from callout_server.tiers.chat.history import ChatHistory
from callout_server.tiers.chat.schemas import SessionCreate
from callout_server.tiers.chat.turn import TurnProgress, TurnRun
from callout_server.tiers.overrides import Overrides
from callout_server.upstream import Route

# Revisions remembered per session (to tell a stale revision from a new turn); old turns
# beyond this are forgotten so a very long call cannot grow the map without bound.
MAX_TRACKED_TURNS = 256


class ChatSession:
    def __init__(
        self,
        call_id: str,
        history: ChatHistory,
        *,
        tools: list[dict[str, Any]],
        overrides: Overrides,
        apology: str,
        guard: SpeechGuard | None = None,
        filler: FillerPlan | None = None,
        source: str = "live",  # "playground": a console user's session, no live traffic
        route: Route | None = None,  # the playground's chosen configuration; None: active
        spec: SessionCreate | None = None,  # the request that made it (a shared store's)
    ) -> None:
        self.call_id = call_id
        self.spec = spec
        self.version = 0  # of the shared store's copy this one was loaded from or saved as
        self.sid = ""  # the shared store's name for this incarnation of the call's session
        self.lease: str | None = None  # the shared turn lease this worker holds for it
        self.source = source
        self.route = route
        self.history = history
        self.tools = tools
        self.overrides = overrides
        self.apology = apology
        self.guard = guard  # every sentence checked before it is spoken
        self.filler = filler  # a hold phrase when the model is slow to start
        self.run: TurnRun | None = None
        self.closed = False
        self.last_active = time.monotonic()
        # turn_id -> newest revision seen; insertion order = turn order.
        self.revisions: OrderedDict[str, int] = OrderedDict()
        self.turn_id: str | None = None  # the newest user turn
        self.progress = TurnProgress()  # the newest turn's output so far
        # call_id -> (turn_id, output) of the turn whose answer made the call.
        self.call_turns: dict[str, tuple[str, str]] = {}

    @property
    def in_response(self) -> bool:
        return self.run is not None

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def idle_for(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.last_active

    def stop_run(self, reason: str) -> TurnRun | None:
        """Stop the generation in flight (if any) and return it."""
        run = self.run
        if run is not None:
            run.stop(reason)
        return run

    def begin_turn(self, turn_id: str, revision: int) -> None:
        """Per-turn counters start over for a new turn or a new revision of it."""
        self.revisions[turn_id] = revision
        self.revisions.move_to_end(turn_id)
        while len(self.revisions) > MAX_TRACKED_TURNS:
            self.revisions.popitem(last=False)
        self.turn_id = turn_id
        self.progress = TurnProgress()

    def attach(self, run: TurnRun) -> None:
        self.run = run
        self.touch()

    def progress_of(self, turn_id: str) -> TurnProgress:
        """Where a continuation of `turn_id` goes on: the newest turn's progress, or a fresh
        count for a late tool output of an older turn."""
        return self.progress if turn_id == self.turn_id else TurnProgress()

    def release(self, run: TurnRun) -> None:
        """`run` has ended (any reason): its `on_end`."""
        if self.run is run:
            self.run = None
        self.touch()

    def note_tool_call(self, call_id: str, turn_id: str, output: str) -> None:
        self.call_turns[call_id] = (turn_id, output)
        # Only pending calls can be answered; forget the others (bounded memory).
        if len(self.call_turns) > MAX_TRACKED_TURNS:
            pending = set(self.history.pending_call_ids)
            self.call_turns = {k: v for k, v in self.call_turns.items() if k in pending}

    def close(self) -> TurnRun | None:
        """End the session: stop its generation, void any compaction in flight."""
        self.closed = True
        run = self.stop_run("cancelled")
        self.history.close()
        return run
