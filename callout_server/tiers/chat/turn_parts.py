"""Pieces of a chat turn run (turn.py) that are plain values: the turn's progress across its
runs, and what an internal error (a bug of ours, not the model's) ends and records as."""

from __future__ import annotations

from dataclasses import dataclass

from callout_server.i18n import text
from callout_server.llm import Diagnostic, Locale

INTERNAL_ERROR = "internal_error"


@dataclass(slots=True)
class TurnProgress:
    """One turn's output so far, across its runs: the next `sentence` index, and whether
    anything was said or done (an apology is for a caller who heard nothing, so it never
    follows a tool call either: the call is in the history, its answer is to come)."""

    index: int = 0
    spoke: bool = False  # a sentence or delta was sent, or the model called a tool
    filler: bool = False  # a filler was spoken in this turn (once per turn)


def internal_error(locale: Locale) -> dict[str, str]:
    """The `end` event's `error` for a bug: its code, and nothing of its cause."""
    return {"code": INTERNAL_ERROR, "message": text("chat_internal_error", locale)}


def internal_diagnostic(exc: BaseException, locale: Locale) -> Diagnostic:
    """The call-log verdict of a run our own code broke (else it would read `ok`). The
    detail is the exception's type only: its text may quote call data."""
    return Diagnostic.make(INTERNAL_ERROR, locale, detail=type(exc).__name__)
