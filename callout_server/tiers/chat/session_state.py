"""A chat session as data: what a shared store keeps between turns (session_store.py).

    fixed = dump_settings(session)        # once, at create: what never changes in a call
    turns = dump_turns(session)           # after every turn: history and turn bookkeeping
    restore(session, turns)               # into a session built from `fixed`, or its copy

Two parts because a turn should move only what it changed. The settings are the request
that created the session (`SessionCreate`, as JSON) with the apology it resolved to and its
`source`: most of a session's bytes (the system prompt, the tools) and its costliest part to
rebuild (validation, the speech guard); stored once, read by a worker only the first time it
serves the call. The turns part is the history (`ChatHistory.dump()`: items, pending tool
calls, the compaction's summary) and the turn bookkeeping: the revisions seen, the newest
turn, its progress (a continuation after a tool output goes on counting sentences on any
worker) and which turn made each pending call. Not kept: the generation in flight (a turn
runs on one worker) and a compaction in flight (it is started again after the next completed
turn). Pure functions; no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from callout_server.tiers.chat.session import ChatSession
from callout_server.tiers.chat.turn import TurnProgress

FORMAT = 2  # 1: one part (settings and turns together), before the split


def dump_settings(session: ChatSession) -> dict[str, Any]:
    assert session.spec is not None, "a session made without its request cannot be shared"
    return {"format": FORMAT, "spec": session.spec.model_dump(mode="json"),
            "source": session.source, "apology": session.apology}


def dump_turns(session: ChatSession) -> dict[str, Any]:
    progress = session.progress
    return {
        "history": session.history.dump(),
        "revisions": [[turn, rev] for turn, rev in session.revisions.items()],
        "turn_id": session.turn_id,
        "progress": [progress.index, progress.spoke, progress.filler],
        "call_turns": {call: [turn, output] for call, (turn, output)
                       in session.call_turns.items()},
    }


def restore(session: ChatSession, turns: dict[str, Any]) -> ChatSession:
    """Put `turns` into `session`: one built from the settings, or this worker's older copy
    (a compaction in flight on it is voided: it summarised a history that is gone)."""
    session.history.restore(turns["history"])
    session.revisions = OrderedDict((turn, int(rev)) for turn, rev in turns["revisions"])
    session.turn_id = turns["turn_id"]
    index, spoke, filler = turns["progress"]
    session.progress = TurnProgress(index=int(index), spoke=bool(spoke), filler=bool(filler))
    session.call_turns = {call: (turn, output)
                          for call, (turn, output) in turns["call_turns"].items()}
    return session
