"""Endpoint health over Redis: the channel `Upstreams.share_health` speaks through.

    channel = RedisHealthChannel(redis_url, prefix)      # wired by services.py
    shared = upstreams.share_health(channel)
    await channel.start(shared.receive) ... await channel.stop()

Redis keys, under the configuration bus's prefix (`[redis] channel_prefix`):

    <prefix>:upstream-health                 pub/sub: one JSON notice per verdict
    <prefix>:upstream-cooled                 hash: endpoint id -> the cool-down (epoch end),
                                             read by a worker when it (re)subscribes, so one
                                             started later skips a dead endpoint too
    <prefix>:probe-lease:<endpoint id>       SET NX PX: which worker probes the endpoint

Nothing here is on a call's path: `publish` queues (a writer task sends), the subscription
hands each notice to `receive`, and `lease` is asked when a cool-down ends. Redis down: the
channel says `available` False (the workers go by their own views), and both loops
reconnect by themselves, with a backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from callout_server.config.subscription import follow
from callout_server.upstream import HealthNotice

log = logging.getLogger(__name__)

_OP_TIMEOUT_S = 0.5
_QUEUE = 1024
_WARN_EVERY_S = 60.0
# The cooled-endpoint hash outlives its longest entry (a Retry-After is honoured to 300 s).
_COOLED_TTL_S = 600
# Deletes the lease only when it is ours (a verdict ends our round, never another's).
_RELEASE = """if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"""


class RedisHealthChannel:
    def __init__(self, redis_url: str, prefix: str, *, origin: str | None = None) -> None:
        self.redis_url = redis_url
        self.channel = f"{prefix}:upstream-health"
        self.cooled_key = f"{prefix}:upstream-cooled"
        self.lease_prefix = f"{prefix}:probe-lease:"
        self.origin = origin or f"{os.uname().nodename}:{os.getpid()}:{id(self):x}"
        self._subscribed = False
        self._writer_ok = True
        self._client: aioredis.Redis | None = None
        self._queue: asyncio.Queue[HealthNotice] = asyncio.Queue(_QUEUE)
        self._tasks: list[asyncio.Task[None]] = []
        self._receive: Callable[[HealthNotice], None] | None = None
        self._stopping = False
        self.dropped = 0  # notices the full queue refused
        self._warned_at = -math.inf

    def __repr__(self) -> str:
        return f"<RedisHealthChannel {self.channel} available={self.available}>"

    @property
    def available(self) -> bool:
        return self._subscribed

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self, receive: Callable[[HealthNotice], None]) -> None:
        self._receive = receive
        self._stopping = False
        self._client = aioredis.from_url(self.redis_url, socket_connect_timeout=1.0,
                                         socket_timeout=1.0)
        self._tasks = [asyncio.create_task(self._subscribe_loop(), name="health-sub"),
                       asyncio.create_task(self._write_loop(), name="health-pub")]

    async def stop(self) -> None:
        self._stopping = True
        self._subscribed = False
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
        self._tasks.clear()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None

    # -- what upstream calls ---------------------------------------------------------------
    def publish(self, notice: HealthNotice) -> None:
        if not self.available:
            return
        try:
            self._queue.put_nowait(notice)
        except asyncio.QueueFull:  # a storm of verdicts: the newest ones are dropped
            self.dropped += 1
            now = time.monotonic()
            if now - self._warned_at >= _WARN_EVERY_S:  # a storm is one line a minute
                self._warned_at = now
                log.warning("upstream health notices backing up; %d dropped so far",
                            self.dropped)

    async def lease(self, endpoint: str, ttl_s: float) -> bool | None:
        if self._client is None or not self.available:
            return None
        key = self.lease_prefix + endpoint
        try:
            async with asyncio.timeout(_OP_TIMEOUT_S):
                if await self._client.set(key, self.origin, nx=True, px=int(ttl_s * 1000)):
                    return True
                holder = await self._client.get(key)
        except Exception as exc:
            self._write_failed(exc)
            return None
        # Still ours from the round before (our verdict came back as a new cool-down).
        return holder is not None and holder.decode() == self.origin

    # -- loops -------------------------------------------------------------------------------
    async def _write_loop(self) -> None:
        while not self._stopping:
            batch = [await self._queue.get()]
            while not self._queue.empty():  # whatever piled up meanwhile: one round trip
                batch.append(self._queue.get_nowait())
            try:
                async with asyncio.timeout(_OP_TIMEOUT_S * 2):
                    await self._send(batch)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._write_failed(exc)
            else:
                self._writer_ok = True

    async def _send(self, batch: list[HealthNotice]) -> None:
        assert self._client is not None
        pipe = self._client.pipeline(transaction=False)
        for notice in batch:
            if notice.kind == "cooled":
                entry = {"until": time.time() + notice.cooldown_s,
                         "ejections": notice.ejections, "origin": notice.origin}
                pipe.hset(self.cooled_key, notice.endpoint, json.dumps(entry))
            else:
                pipe.hdel(self.cooled_key, notice.endpoint)
            pipe.publish(self.channel, notice.to_json())
            pipe.eval(_RELEASE, 1, self.lease_prefix + notice.endpoint, self.origin)
        pipe.expire(self.cooled_key, _COOLED_TTL_S)
        await pipe.execute()

    async def _subscribe_loop(self) -> None:
        await follow(self.redis_url, self.channel, stopping=lambda: self._stopping,
                     on_message=self._on_notice, on_up=self._on_up, on_down=self._on_down)

    async def _on_up(self, client: aioredis.Redis) -> None:
        await self._catch_up(client)
        # Warm the writer's connection: the first verdict goes out at once.
        assert self._client is not None
        await self._client.ping()
        if not self._subscribed:
            log.info("upstream health shared through redis (%s)", self.channel)
        self._subscribed = True

    def _on_down(self, exc: BaseException) -> None:
        if self._subscribed:
            log.warning("redis unreachable (%s); each worker goes by its own view "
                        "of endpoint health", type(exc).__name__)
        self._subscribed = False

    async def _catch_up(self, client: aioredis.Redis) -> None:
        """The cool-downs in force (found while this worker was away or not yet started)."""
        entries: dict[Any, Any] = await client.hgetall(self.cooled_key)
        now = time.time()
        for endpoint, raw in entries.items():
            try:
                entry = json.loads(raw)
                left = float(entry["until"]) - now
                notice = HealthNotice("cooled", endpoint.decode(), str(entry["origin"]), left,
                                      int(entry.get("ejections", 0)))
            except (ValueError, KeyError, TypeError, OverflowError):  # 1e400: int(inf)
                continue
            if left > 0:
                self._deliver(notice)

    def _on_notice(self, data: bytes | str | None) -> None:
        notice = HealthNotice.from_json(data or b"")
        if notice is not None:
            self._deliver(notice)

    def _deliver(self, notice: HealthNotice) -> None:
        if self._receive is None:
            return
        try:
            self._receive(notice)
        except Exception:  # one bad notice must not end the subscription
            log.exception("applying an upstream health notice failed")

    def _write_failed(self, exc: BaseException) -> None:
        if self._writer_ok:
            log.warning("redis write for upstream health failed (%s); going by this "
                        "worker's own view until it answers", type(exc).__name__)
        self._writer_ok = False
