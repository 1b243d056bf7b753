"""SSE delivery with scripted timing and faults, shared by both API styles.

A "chunk" is one SSE event (``data:`` line, incl. the final ``[DONE]``); ``keep-alive``
comment lines never count. Fault positions (``hang``, ``disconnect_after``,
``malformed_after``) are chunk counts: ``disconnect_after: 3`` means the client sees three
events and then the connection drops without the terminating chunk.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable
from typing import Any

from aiohttp import web

from callout_server.emulator.scripts import Reply

KEEPALIVE = b": keep-alive\n\n"
SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


async def stall(resp: web.StreamResponse | None, seconds: float, keepalive_ms: float | None
                ) -> None:
    """Wait ``seconds`` (``inf`` = forever), trickling keep-alive comments if asked."""
    if seconds <= 0:
        return
    if resp is None or not keepalive_ms:
        if math.isinf(seconds):
            await asyncio.Event().wait()  # only cancellation (client gone) ends this
        await asyncio.sleep(seconds)
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    step = keepalive_ms / 1000
    while True:
        left = deadline - loop.time()
        if left <= 0:
            return
        if left < step:
            await asyncio.sleep(left)
            return
        await asyncio.sleep(step)
        await resp.write(KEEPALIVE)


def mark_disconnected(record: dict[str, Any]) -> None:
    if not record["server_closed"] and not record["disconnected"]:
        record["disconnected"] = True
        record["disconnected_at"] = time.time()


def drop_connection(request: web.Request, record: dict[str, Any]) -> None:
    """Close the socket mid-response (no terminating chunk): a scripted fault, not the client."""
    record["server_closed"] = True
    transport = request.transport
    if transport is not None:
        transport.close()


async def pump(
    request: web.Request, reply: Reply, frames: Iterable[bytes], record: dict[str, Any],
    malformed: bytes,
) -> web.StreamResponse:
    resp = web.StreamResponse(headers=SSE_HEADERS)
    # Headers go out at once, as real servers do; time to first token is spent after them.
    await resp.prepare(request)
    ka = reply.keepalive_ms
    delay = reply.token_delay_ms / 1000
    hang_after, drop_after, bad_after = (
        reply.hang_after, reply.disconnect_after, reply.malformed_after,
    )
    sent = 0
    if not delay and hang_after is None and drop_after is None and bad_after is None:
        # Benchmark fast path: nothing paces the chunks, so one write carries them all (a
        # fast real server's events coalesce in TCP the same way); per-event awaits would
        # make the emulator, not the hub, the bottleneck.
        try:
            await stall(resp, reply.ttft_ms / 1000, ka)
            batch = list(frames)
            await resp.write(b"".join(batch))
            record["chunks_sent"] = len(batch)
            await resp.write_eof()
        except ConnectionError:
            mark_disconnected(record)
        return resp
    try:
        await stall(resp, reply.ttft_ms / 1000, ka)
        for frame in frames:
            if sent == hang_after:
                await stall(resp, math.inf, ka)
            if sent == drop_after:
                drop_connection(request, record)
                return resp
            if sent == bad_after:
                await resp.write(malformed)
            if sent and delay:
                await stall(resp, delay, ka)
            await resp.write(frame)
            sent += 1
            record["chunks_sent"] = sent
        if hang_after is not None and hang_after >= sent:
            await stall(resp, math.inf, ka)
        if drop_after is not None and drop_after >= sent:
            drop_connection(request, record)
            return resp
        await resp.write_eof()
    except ConnectionError:
        # Client went away between our writes (handler cancellation covers the sleeps).
        mark_disconnected(record)
    return resp


async def non_stream_delay(reply: Reply, n_chunks: int) -> None:
    """A non-streaming answer arrives after the whole generation time."""
    seconds = (reply.ttft_ms + reply.token_delay_ms * n_chunks) / 1000
    if seconds > 0:
        await asyncio.sleep(seconds)
