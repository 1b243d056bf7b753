"""A service key's limits, counted across every worker in Redis (limits_lua.py).

    lease = await limiter.acquire(key)       # LimitExceeded (a 429) when a limit is reached
    ...                                       # the request runs
    await limiter.release(key, lease)        # its in-flight slot back
    limiter.spend(key, tokens)               # after each model call: the vendor's count

    rpm            requests admitted in any 60 s (a sliding window, not a fixed minute)
    max_in_flight  requests running at once (a lease, released when the answer is done)
    daily_tokens   tokens the vendors reported today (UTC), prompt + completion; checked
                   before a request, counted after its calls (a call in flight may end a
                   little past the budget, the next request is refused)

When Redis cannot be reached (or is not configured) each worker counts alone and allows its
share of each limit (`limit // [service_keys] workers`, at least 1), so the cluster together
still stays within it; /healthz says `key_limits: "local"` and the log says so once. Redis
is tried again after `RETRY_S`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Literal

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from callout_server.service_keys.errors import (
    BUDGET_EXHAUSTED,
    RATE_LIMITED,
    TOO_MANY_IN_FLIGHT,
    LimitExceeded,
)
from callout_server.service_keys.limits_lua import ACQUIRE
from callout_server.service_keys.local_limits import LocalLimits
from callout_server.service_keys.table import ServiceKey

log = logging.getLogger(__name__)

RETRY_S = 1.0  # after a Redis failure, the next try (meanwhile: local shares)
SPEND_EVERY_S = 0.1  # tokens spent are added to Redis in batches, per key
WARN_EVERY_S = 60.0  # a flapping Redis is logged once a minute, not at every flip
MAX_CONNECTIONS = 1024
CODES = {1: RATE_LIMITED, 2: TOO_MANY_IN_FLIGHT, 3: BUDGET_EXHAUSTED}
LimitsState = Literal["redis", "local"]


def day_of(now: float) -> tuple[int, float]:
    """The UTC day number of `now`, and the seconds left in it."""
    day = int(now // 86400)
    return day, (day + 1) * 86400 - now


@dataclass(frozen=True, slots=True)
class Lease:
    member: str
    where: LimitsState


class KeyLimiter:
    def __init__(self, redis_url: str, prefix: str, *, workers: int = 1,
                 lease_s: float = 300.0, timeout_s: float = 0.25) -> None:
        self._prefix = f"{prefix}:sk"
        self._lease_ms = int(lease_s * 1000)
        self.local = LocalLimits(workers)
        # One connection per request in flight at most (acquire, then release): room for a
        # busy worker's concurrency, so the pool is never what refuses a request.
        self._redis = aioredis.from_url(redis_url, socket_timeout=timeout_s,
                                        socket_connect_timeout=timeout_s,
                                        max_connections=MAX_CONNECTIONS) if redis_url else None
        self._acquire = self._redis.register_script(ACQUIRE) if self._redis else None
        self._down_until = 0.0 if self._redis else math.inf
        self.state: LimitsState = "redis" if self._redis else "local"
        self._ids = itertools.count()
        self._worker = secrets.token_hex(4)
        self._tasks: set[asyncio.Task[None]] = set()
        self._spent: dict[int, int] = {}  # key id -> tokens not yet added to Redis
        self._flush_scheduled = False
        self._warned_at = -math.inf

    def _keys(self, key_id: int, day: int) -> list[str]:
        base = f"{self._prefix}:{key_id}"
        return [f"{base}:rpm", f"{base}:inflight", f"{base}:tokens:{day}"]

    def _redis_up(self) -> bool:
        return self._redis is not None and time.monotonic() >= self._down_until

    async def acquire(self, key: ServiceKey) -> Lease:
        member = f"{self._worker}:{next(self._ids)}"
        if self._redis_up():
            day, left = day_of(time.time())
            try:
                verdict = await self._acquire(  # type: ignore[misc]
                    keys=self._keys(key.id, day),
                    args=[key.rpm or 0, key.max_in_flight or 0, key.daily_tokens or 0, member,
                          self._lease_ms, int(left * 1000)])
            except (RedisError, OSError) as exc:
                self._failed(exc)
            else:
                self._ok()
                which, limit, wait_ms = (int(v) for v in verdict)
                if which:
                    raise LimitExceeded(CODES[which], limit, math.ceil(wait_ms / 1000))
                self.local.admitted(key)
                return Lease(member, "redis")
        self.local.acquire(key)  # raises LimitExceeded at this worker's share
        return Lease(member, "local")

    async def release(self, key: ServiceKey, lease: Lease) -> None:
        self.local.release(key)
        if lease.where != "redis" or key.max_in_flight is None or self._redis is None:
            return
        try:
            await self._redis.zrem(f"{self._prefix}:{key.id}:inflight", lease.member)
        except (RedisError, OSError) as exc:
            self._failed(exc)  # the lease runs out by itself

    def spend(self, key: ServiceKey, tokens: int) -> None:
        """A call's tokens (no await: from the call log's record_call). Added to Redis
        within `SPEND_EVERY_S`, one INCRBY per key and batch."""
        self.local.spend(key, tokens)
        if key.daily_tokens is None or tokens <= 0 or self._redis is None:
            return
        self._spent[key.id] = self._spent.get(key.id, 0) + tokens
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_later(SPEND_EVERY_S, self._start_flush)

    def _start_flush(self) -> None:
        self._flush_scheduled = False
        task = asyncio.get_running_loop().create_task(self.flush_spent())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush_spent(self) -> None:
        batch, self._spent = self._spent, {}
        if not batch or self._redis is None:
            return
        day, _ = day_of(time.time())
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key_id, tokens in batch.items():
                    name = self._keys(key_id, day)[2]
                    pipe.incrby(name, tokens).expire(name, 2 * 86400)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._failed(exc)  # this worker's own count (local) still has them

    def _failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        if self.state == "redis" and now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            log.warning("service-key limits: redis unreachable (%s); each worker now allows "
                        "1/%d of every limit on its own", type(exc).__name__, self.local.workers)
        self.state = "local"
        self._down_until = now + RETRY_S

    def _ok(self) -> None:
        if self.state == "local":
            log.info("service-key limits: counted in redis again")
        self.state = "redis"

    async def aclose(self) -> None:
        await self.flush_spent()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2)
        if self._redis is not None:
            await self._redis.aclose()
