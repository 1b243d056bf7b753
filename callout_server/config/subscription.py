"""One Redis channel, followed for as long as a worker runs.

    await follow(url, channel, stopping=..., on_message=..., on_up=..., on_down=...)

The configuration bus (bus.py) and the shared endpoint health (health_bus.py) both listen
this way: subscribe (and `on_up`, e.g. catching up on what was missed) within 2 s, then read
messages, pinging every 2 s so a silent half-open connection is found by a ping rather than
by waiting; any failure is reported to `on_down` and the subscription is made again after a
backoff that doubles from 0.2 s to 5 s. Returns once `stopping()` is true; a cancellation
ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

BACKOFF_MIN_S = 0.2
BACKOFF_MAX_S = 5.0
_CONNECT_S = 2.0  # subscribing and on_up
_PING_EVERY_S = 2.0

Data = bytes | str | None


async def follow(redis_url: str, channel: str, *, stopping: Callable[[], bool],
                 on_message: Callable[[Data], None],
                 on_up: Callable[[aioredis.Redis], Awaitable[None]],
                 on_down: Callable[[BaseException], None]) -> None:
    backoff = BACKOFF_MIN_S
    while not stopping():
        client = aioredis.from_url(redis_url, socket_connect_timeout=1.0,
                                   health_check_interval=2)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            async with asyncio.timeout(_CONNECT_S):
                await pubsub.subscribe(channel)
                await on_up(client)
            backoff = BACKOFF_MIN_S
            await _listen(pubsub, stopping, on_message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            on_down(exc)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            with contextlib.suppress(Exception):
                await client.aclose()
        if stopping():
            return
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, BACKOFF_MAX_S)


async def _listen(pubsub: aioredis.client.PubSub, stopping: Callable[[], bool],
                  on_message: Callable[[Data], None]) -> None:
    last_ping = time.monotonic()
    while not stopping():
        message = await pubsub.get_message(timeout=1.0)
        if message is not None and message.get("type") == "message":
            on_message(message.get("data"))
        if time.monotonic() - last_ping > _PING_EVERY_S:
            async with asyncio.timeout(_CONNECT_S):
                await pubsub.ping()
            last_ping = time.monotonic()
