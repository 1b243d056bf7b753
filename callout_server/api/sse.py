"""Server-sent events as the contract shapes them: `event: <name>` + one JSON object per `data:`.

The event name is also inside the object (`"event"`), for clients that read only `data:`.
The tiers yield `StreamEvent` values; this is the one place they become bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import orjson
from fastapi.responses import StreamingResponse

from callout_server.streams import Closing, StreamEvent

SSE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: do not buffer a live stream
}


def sse_event(name: str, data: dict[str, Any]) -> bytes:
    payload = orjson.dumps({"event": name, **data})
    return b"event: " + name.encode() + b"\ndata: " + payload + b"\n\n"


async def sse_frames(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    # aclosing: a client that goes away closes this generator, and with it the tier's, whose
    # `finally` stops the generation at once (barge-in, disconnect) instead of at GC time.
    async with contextlib.aclosing(events):  # type: ignore[type-var]
        async for event in events:
            yield sse_event(event.name, event.data)


def sse_response(events: AsyncIterator[StreamEvent]) -> StreamingResponse:
    """A streamed answer; closing it (client gone) closes `events`, which stops the tier."""
    return StreamingResponse(sse_frames(events), media_type="text/event-stream",
                             headers=SSE_HEADERS)


async def until_closing(events: AsyncIterator[StreamEvent], closing: Closing,
                        cancelled: Callable[[], Iterable[StreamEvent]],
                        ) -> AsyncIterator[StreamEvent]:
    """`events`, ended at once when the worker begins to shut down: the tier's stream is
    cancelled where it waits (its `finally` closes the upstream request and records the
    call), and `cancelled()`'s events (the tier's `end` reason `cancelled`) are sent instead
    of the rest. A task per event: for streams off the hot path (scripts), not chat turns,
    which their service ends itself (`ChatService.end_all`)."""
    stop = asyncio.ensure_future(closing.wait())
    try:
        async with contextlib.aclosing(events):  # type: ignore[type-var]
            while True:
                step = asyncio.ensure_future(anext(events))
                try:
                    await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
                except BaseException:  # the client went away: stop the tier's stream first
                    step.cancel()
                    await asyncio.wait({step})
                    raise
                if step.done():
                    try:
                        event = step.result()
                    except StopAsyncIteration:
                        return
                    yield event
                    continue
                step.cancel()
                await asyncio.wait({step})  # the tier's stream has let go of the upstream
                for event in cancelled():
                    yield event
                return
    finally:
        stop.cancel()
