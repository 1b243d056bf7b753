"""What a chat turn holds for its reader: its events in order, bounded by the text they carry.

    box = Outbox(limit_bytes=256 * 1024)
    if not box.put(StreamEvent("sentence", {...})):   # False: the reader is too far behind
        ...                                            # a slow consumer: end the turn
    box.close(StreamEvent("end", {...}))              # `usage`/`end` always fit, then EOF
    event = await box.get()                           # None once closed and read out

The producer (the model's stream) never waits for the reader: barge-in and timeouts must
not stall behind a socket. So what the reader has not taken yet is held here, and a reader
that stops reading (a client whose socket is full, a client that never reads) would make
it grow without bound. It is bounded instead: the text of the events waiting (UTF-8 bytes
of `sentence` and `text_delta` text; a tool call counts its arguments' text) may not pass
`[chat] max_unread_bytes`. The event that would pass it is refused, and the turn ends as a
slow consumer (`end` reason `error`, code `slow_consumer`, the upstream request closed).
What the socket itself holds (the kernel's buffers, uvicorn's 64 KB write buffer) comes
on top, bounded by them.

`close()` is not bounded by bytes: it adds the turn's last events (`usage`, `end`, at most
two small objects) whatever is waiting, so a reader that catches up still hears `end`.
"""

from __future__ import annotations

import asyncio

from callout_server.streams import StreamEvent

SLOW_CONSUMER = "slow_consumer"


def _size(event: StreamEvent) -> int:
    data = event.data
    text = data.get("text")
    if isinstance(text, str):
        return len(text.encode())
    arguments = data.get("arguments")
    return len(str(arguments).encode()) if arguments else 0


class Outbox:
    """An unbounded-by-count, bounded-by-text queue with one producer and one reader."""

    __slots__ = ("_queue", "closed", "limit_bytes", "pending_bytes")

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.pending_bytes = 0
        self.closed = False
        self._queue: asyncio.Queue[tuple[StreamEvent, int] | None] = asyncio.Queue()

    def put(self, event: StreamEvent) -> bool:
        """Queue `event`; False (and nothing queued) if it would pass the bound."""
        if self.closed:
            return True  # the turn is over: nothing more is sent, nothing is refused
        size = _size(event)
        if size and self.pending_bytes + size > self.limit_bytes:
            return False
        self.pending_bytes += size
        self._queue.put_nowait((event, size))
        return True

    def close(self, *last: StreamEvent) -> None:
        """Queue the turn's last events and the end of the stream (once)."""
        if self.closed:
            return
        self.closed = True
        for event in last:
            self._queue.put_nowait((event, 0))
        self._queue.put_nowait(None)

    async def get(self) -> StreamEvent | None:
        item = await self._queue.get()
        if item is None:
            return None
        event, size = item
        self.pending_bytes -= size
        return event
