"""A chat session as data: what a shared store keeps between turns (session_store.py).

    state = dump(session)                 # JSON-ready: settings, history, turn bookkeeping
    restore(session, state)               # into a session rebuilt from `state["spec"]`

Settings are the request that created the session (`SessionCreate`, as JSON) with the
apology it resolved to and its `source`; the history is `ChatHistory.dump()` (items,
pending tool calls, the compaction's summary); the turn bookkeeping is the revisions seen,
the newest turn, its progress (a continuation after a tool output goes on counting
sentences on any worker) and which turn made each pending call. Not kept: the generation
in flight (a turn runs on one worker) and a compaction in flight (it is started again after
the next completed turn). Pure functions; no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from callout_server.tiers.chat.session import ChatSession
from callout_server.tiers.chat.turn import TurnProgress

FORMAT = 1


def dump(session: ChatSession) -> dict[str, Any]:
    assert session.spec is not None, "a session made without its request cannot be shared"
    progress = session.progress
    return {
        "format": FORMAT,
        "spec": session.spec.model_dump(mode="json"),
        "source": session.source,
        "apology": session.apology,
        "history": session.history.dump(),
        "revisions": [[turn, rev] for turn, rev in session.revisions.items()],
        "turn_id": session.turn_id,
        "progress": [progress.index, progress.spoke, progress.filler],
        "call_turns": {call: [turn, output] for call, (turn, output)
                       in session.call_turns.items()},
    }


def restore(session: ChatSession, state: dict[str, Any]) -> ChatSession:
    """Fill a session built from `state["spec"]` with the rest of `state`."""
    session.history.restore(state["history"])
    session.revisions = OrderedDict((turn, int(rev)) for turn, rev in state["revisions"])
    session.turn_id = state["turn_id"]
    index, spoke, filler = state["progress"]
    session.progress = TurnProgress(index=int(index), spoke=bool(spoke), filler=bool(filler))
    session.call_turns = {call: (turn, output)
                          for call, (turn, output) in state["call_turns"].items()}
    return session
