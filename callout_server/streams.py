"""What a tier's stream yields: the contract's events as values, not wire bytes.

The chat and script tiers produce `StreamEvent`s (`sentence`, `text_delta`, `tool_call`,
`usage`, `end`); only the routers frame them as server-sent events (`api/sse.py`), so a
tier can be driven and tested without the wire format.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StreamEvent:
    name: str
    data: dict[str, Any]


class Closing:
    """The worker has begun to shut down: every open stream ends now, `end` reason `cancelled`.

        closing.on_begin(chat.end_all)      # called once, synchronously, at the signal
        await closing.wait()                 # for a stream that waits on something else

    uvicorn calls each connection's `shutdown()` right after it stops accepting (SIGTERM);
    the connection protocol (api/connections.py) calls `begin()` from there, which it finds
    in the lifespan's state. Without it a stream would run on until its client or the model
    ended it, and uvicorn would wait for that (or for `[server] shutdown_grace_s`).
    """

    def __init__(self) -> None:
        self.begun = False
        self._callbacks: list[Callable[[], object]] = []
        self._event = asyncio.Event()

    def on_begin(self, callback: Callable[[], object]) -> None:
        self._callbacks.append(callback)

    def begin(self) -> None:
        if self.begun:
            return
        self.begun = True
        self._event.set()
        for callback in self._callbacks:
            try:
                callback()
            except Exception:  # one stream owner's failure must not keep the others open
                log.exception("could not end the open streams at shutdown")

    async def wait(self) -> None:
        await self._event.wait()
