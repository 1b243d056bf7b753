"""Fillers: a hold phrase when the model is slow to start (`filler` on session create).

    plan = FillerPlan(FillerSpec(after_ms=900, texts=["嗯，我查一下。"]))
    plan.next_text()           # the session's texts in turn, so a caller does not hear one
                               # phrase twice in a row

The turn arms a timer for `after_ms` when its run starts; if no sentence has gone out by
then, one `sentence` with `"filler": true` is sent (at most once per turn, its continuations
included), never stored in the history. A sentence that came first disarms it. Audio output
only: a text client has no silence to fill.
"""

from __future__ import annotations

from typing import Annotated

from prometheus_client import Counter
from pydantic import Field

from callout_server.validation import RequestModel

FILLERS = Counter("callout_chat_fillers_total", "Filler sentences spoken by the chat tier")

FillerText = Annotated[str, Field(min_length=1, max_length=200)]


class FillerSpec(RequestModel):
    """`filler` of `POST /api/chat/sessions`."""

    after_ms: int = Field(900, ge=100, le=10_000,
                          description="no sentence ready this long after the turn started")
    texts: list[FillerText] = Field(min_length=1, max_length=20)


class FillerPlan:
    def __init__(self, spec: FillerSpec) -> None:
        self.spec = spec
        self.after_s = spec.after_ms / 1000
        self._texts = [t.strip() for t in spec.texts if t.strip()] or list(spec.texts)
        self._next = 0

    def next_text(self) -> str:
        text = self._texts[self._next % len(self._texts)]
        self._next += 1
        FILLERS.inc()
        return text
