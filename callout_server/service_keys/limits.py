"""A service key's limits, counted across every worker in Redis, admitted from memory.

    lease = await limiter.acquire(key)       # LimitExceeded (a 429) when a limit is reached
    ...                                       # the request runs
    await limiter.release(key, lease)        # its in-flight slot back (no round trip)
    limiter.spend(key, tokens)               # after each model call: the vendor's count

    rpm            requests admitted in any `[service_keys] window_s` (60 s: a sliding
                   window, not a fixed minute)
    max_in_flight  requests running at once (a lease, released when the answer is done)
    daily_tokens   tokens the vendors reported today (UTC), prompt + completion; checked
                   before a request, counted after its calls (a call in flight may end a
                   little past the budget, the next request is refused)

Each worker reserves batches of admissions and slots from Redis in one atomic step
(limits_lua.py; a batch is about half a second of the key's traffic on the worker, `batch`)
and admits from that reserve in memory (reserve.py): a request whose key has room in the
reserve waits for nothing. The reserve is topped up in the background when it
runs low; a request that finds it empty waits for one reservation (shared by every request
waiting on the same key), and is refused with the limit's Retry-After when Redis says the
limit has no room left. A worker never admits more than it reserved, so the cluster stays
exactly within each limit; what it can hold idle is bounded (reserve.py).

Tokens are summed in memory and added to Redis every `SPEND_EVERY_S`; today's total as
Redis knows it is read with each reservation, and again in the background when it is older
than `TOKENS_FRESH_S`, so another worker's spending is seen within about a second.

When Redis cannot be reached (or is not configured) each worker counts alone and allows its
share of each limit (`limit // [service_keys] workers`, at least 1), so the cluster together
still stays within it; /healthz says `key_limits: "local"` and the log says so once. Redis
is tried again after `RETRY_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from callout_server.service_keys.limit_metrics import (
    BACK_ADMISSIONS,
    BACK_SLOTS,
    RESERVATIONS,
    WAITS,
)
from callout_server.service_keys.limits_lua import RESERVE
from callout_server.service_keys.local_limits import LocalLimits
from callout_server.service_keys.reserve import KeyReserve, Round, Slot, day_of, limits_of
from callout_server.service_keys.table import ServiceKey

log = logging.getLogger(__name__)

RETRY_S = 1.0  # after a Redis failure, the next try (meanwhile: local shares)
SPEND_EVERY_S = 0.1  # tokens spent are added to Redis in batches, per key
TOKENS_FRESH_S = 1.0  # today's total is read again in the background after this long
WARN_EVERY_S = 60.0  # a flapping Redis is logged once a minute, not at every flip
MAX_TRIES = 8  # reservations one request waits for before it is refused
MAX_CONNECTIONS = 1024
MIN_BATCH = 32  # admissions a reservation asks for, at the least (below the caps)
BATCH_S = 0.5  # ... or this long of the key's traffic on this worker, when more
LimitsState = Literal["redis", "local"]


@dataclass(frozen=True, slots=True)
class Lease:
    member: str
    where: LimitsState
    slot: Slot | None = None
    reserve: KeyReserve | None = None


class KeyLimiter:
    def __init__(self, redis_url: str, prefix: str, *, workers: int = 1,
                 lease_s: float = 300.0, timeout_s: float = 0.25, window_s: float = 60.0,
                 reserve_s: float = 1.0, reserve_max: int = 512) -> None:
        self._prefix = f"{prefix}:sk"
        self._lease_s = lease_s
        self._window_s = window_s
        self._reserve_s = reserve_s
        self._reserve_max = reserve_max
        self.local = LocalLimits(workers, window_s)
        # A reservation, a hand-back or a flush at a time per connection: room for bursts.
        self._redis = aioredis.from_url(redis_url, socket_timeout=timeout_s,
                                        socket_connect_timeout=timeout_s,
                                        max_connections=MAX_CONNECTIONS) if redis_url else None
        self._reserve = self._redis.register_script(RESERVE) if self._redis else None
        self._down_until = 0.0 if self._redis else math.inf
        self.state: LimitsState = "redis" if self._redis else "local"
        self._ids = itertools.count()
        self._worker = secrets.token_hex(4)
        self._tasks: set[asyncio.Task[object]] = set()
        self._reserves: dict[int, KeyReserve] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._spent: dict[int, int] = {}  # key id -> tokens not yet added to Redis
        self._flushing: dict[int, int] = {}  # key id -> tokens being added right now
        self._flush_scheduled = False
        self._warned_at = -math.inf
        self.rounds = 0  # reservations run (tests and the bench read it)

    def _keys(self, key_id: int, day: int) -> list[str]:
        base = f"{self._prefix}:{key_id}"
        return [f"{base}:rpm", f"{base}:inflight", f"{base}:tokens:{day}"]

    def _redis_up(self) -> bool:
        return self._redis is not None and time.monotonic() >= self._down_until

    def batch(self, rpm: int, rate: float = 0.0) -> int:
        """Admissions one reservation asks for beyond those waiting (what may sit idle):
        `BATCH_S` of this worker's traffic for the key (at least `MIN_BATCH`), so a busy
        key needs a round every quarter of a second rather than every 16 requests, and a
        round that a loaded event loop answers late finds admissions still left; never more
        than `reserve_max` nor `rpm // (4 x workers)`."""
        want = max(MIN_BATCH, math.ceil(rate * BATCH_S))
        return max(1, min(self._reserve_max, rpm // (4 * self.local.workers), want))

    def spare(self, max_in_flight: int, peak: int = 0) -> int:
        """Idle in-flight slots a worker keeps for its next requests (0: each goes back):
        as many as it recently had running (at least `MIN_BATCH`), so a load that swings
        around its level does not hand slots back only to lease them again; never more than
        `reserve_max` nor `max_in_flight // (4 x workers)`."""
        return min(self._reserve_max, max(MIN_BATCH, peak),
                   max_in_flight // (4 * self.local.workers))

    # -- admitting ------------------------------------------------------------------------

    async def acquire(self, key: ServiceKey) -> Lease:
        if self._redis_up():
            try:
                lease = await self._admit(key)
            except (RedisError, OSError) as exc:
                self._failed(exc)
            else:
                self._ok()
                self.local.admitted(key)
                if lease.reserve is not None:
                    lease.reserve.peak = max(lease.reserve.peak, self.local.in_flight(key.id))
                return lease
        self.local.acquire(key)  # raises LimitExceeded at this worker's share
        return Lease(f"{self._worker}:{next(self._ids)}", "local")

    def _reserve_of(self, key: ServiceKey) -> KeyReserve:
        st = self._reserves.get(key.id)
        if st is None or st.limits != limits_of(key):  # new, or its limits were changed
            if st is not None:
                self._hand_back(key.id, *st.everything())
            st = self._reserves[key.id] = KeyReserve(limits_of(key))
            if self._sweeper is None:
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        return st

    async def _admit(self, key: ServiceKey) -> Lease:
        answer: Round | None = None
        for _ in range(MAX_TRIES):
            st = self._reserve_of(key)  # again each time: the key's limits may have changed
            now, back = time.monotonic(), []
            day, left = day_of(time.time())
            unknown, no_admission, no_slot = st.missing(key, now, day, back)
            if back:
                self._hand_back(key.id, back, [])
            if not unknown:
                self._check_budget(key, st, left)
            if not (unknown or no_admission or no_slot):
                slot = st.take(key, now)
                self._top_up_if_low(key, st, now)
                return Lease(slot.member if slot else "", "redis", slot, st)
            if answer is not None:  # the last reservation came back without room
                if no_slot and answer.slots_left == 0:
                    raise LimitExceeded(TOO_MANY_IN_FLIGHT, key.max_in_flight or 0, 1)
                if no_admission and answer.admissions_left == 0:
                    raise LimitExceeded(RATE_LIMITED, key.rpm or 0,
                                        math.ceil(answer.wait_ms / 1000))
            answer = await self._wait_round(key, st, no_admission, no_slot)
        raise LimitExceeded(RATE_LIMITED, key.rpm or 0, 1)  # others took all it reserved

    def _check_budget(self, key: ServiceKey, st: KeyReserve, left_s: float) -> None:
        if key.daily_tokens is None:
            return
        used = st.tokens + self._spent.get(key.id, 0) + self._flushing.get(key.id, 0)
        if used >= key.daily_tokens:
            raise LimitExceeded(BUDGET_EXHAUSTED, key.daily_tokens, math.ceil(left_s))

    async def _wait_round(self, key: ServiceKey, st: KeyReserve, admission: bool,
                          slot: bool) -> Round:
        st.waiting_admissions += admission
        st.waiting_slots += slot
        WAITS.inc()
        try:
            if st.pending is None:
                st.pending = asyncio.get_running_loop().create_task(self._round(key, st))
            return await asyncio.shield(st.pending)
        finally:
            st.waiting_admissions -= admission
            st.waiting_slots -= slot

    def _top_up_if_low(self, key: ServiceKey, st: KeyReserve, now: float) -> None:
        if st.pending is not None:
            return
        back: list[str] = []
        low = (key.rpm is not None and
               st.admissions(now, back) <= self.batch(key.rpm, st.rate) // 2) or \
            (key.max_in_flight is not None and not st.free and
             self.spare(key.max_in_flight, st.peak)) or \
            (key.daily_tokens is not None and now - st.tokens_at > TOKENS_FRESH_S)
        self._hand_back(key.id, back, [])
        if low:
            task = st.pending = asyncio.get_running_loop().create_task(self._round(key, st))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(_quietly)

    async def _round(self, key: ServiceKey, st: KeyReserve) -> Round:
        """One reservation: what is waiting plus a batch, minus what the reserve has."""
        try:
            now, back = time.monotonic(), []
            want = slots = 0
            if key.rpm is not None:
                want = max(0, st.waiting_admissions + self.batch(key.rpm, st.measure_rate(now))
                           - st.admissions(now, back))
                self._hand_back(key.id, back, [])
            if key.max_in_flight is not None:
                # Slots only for requests waiting, or when the idle ones ran low: topping
                # them up with every admission round would lease slots that the next
                # releases find in excess and hand back (a ZREM each).
                spare = self.spare(key.max_in_flight, st.peak)
                if st.waiting_slots or len(st.free) <= spare // 2:
                    slots = max(0, st.waiting_slots + spare - len(st.free))
            prefix = f"{self._worker}:{next(self._ids)}:"
            day, _ = day_of(time.time())
            self.rounds += 1
            RESERVATIONS.inc()
            verdict = await self._reserve(  # type: ignore[misc]
                keys=self._keys(key.id, day),
                args=[key.rpm or 0, want, key.max_in_flight or 0, slots, key.daily_tokens or 0,
                      prefix, int(self._window_s * 1000), int(self._reserve_s * 1000),
                      int(self._lease_s * 1000)])
            spent, granted, left, wait_ms, leased, slots_left, used = (int(v) for v in verdict)
            if self._reserves.get(key.id) is not st:  # the key changed meanwhile
                self._hand_back(key.id, [f"{prefix}a{i}" for i in range(1, granted + 1)],
                                [f"{prefix}s{i}" for i in range(1, leased + 1)])
            else:
                st.add(prefix, granted, leased, hold_until=now + self._reserve_s,
                       slot_until=now + self._lease_s / 2)
            st.tokens_day, st.tokens, st.tokens_at = day, used, now
            return Round(bool(spent), left, wait_ms, slots_left)
        except (RedisError, OSError) as exc:
            self._failed(exc)
            raise
        finally:
            st.pending = None

    async def release(self, key: ServiceKey, lease: Lease) -> None:
        self.local.release(key)
        slot, st = lease.slot, lease.reserve
        if slot is None or st is None:
            return
        now = time.monotonic()
        if self._reserves.get(key.id) is st and slot.until > now and \
                len(st.free) < self.spare(key.max_in_flight or 0, st.peak):
            slot.idle_since = now
            st.free.append(slot)  # the next request reuses it, no round trip
        else:
            self._hand_back(key.id, [], [slot.member])

    # -- handing back, sweeping -----------------------------------------------------------

    def _hand_back(self, key_id: int, admissions: list[str], slots: list[str]) -> None:
        if (admissions or slots) and self._redis is not None:
            BACK_ADMISSIONS.inc(len(admissions))
            BACK_SLOTS.inc(len(slots))
            self._background(self._zrem(key_id, admissions, slots))

    async def _zrem(self, key_id: int, admissions: list[str], slots: list[str]) -> None:
        base = f"{self._prefix}:{key_id}"
        try:
            async with self._redis.pipeline(transaction=False) as pipe:  # type: ignore[union-attr]
                if admissions:
                    pipe.zrem(f"{base}:rpm", *admissions)
                if slots:
                    pipe.zrem(f"{base}:inflight", *slots)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._failed(exc)  # they run out by themselves (hold, lease)

    def _background(self, coro: object) -> None:
        task = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _sweep(self) -> None:
        """Unused admissions whose hold ended and slots idle `reserve_s` go back to Redis;
        a key's reserve that is empty and unused for a window is forgotten."""
        while True:
            await asyncio.sleep(self._reserve_s / 2)
            now = time.monotonic()
            for key_id, st in list(self._reserves.items()):
                self._hand_back(key_id, *st.idle(now, self._reserve_s))
                st.peak = self.local.in_flight(key_id)  # the next half second's starts here
                if not st.batches and not st.free and st.pending is None and \
                        now - st.used_at > self._window_s + self._reserve_s:
                    del self._reserves[key_id]

    # -- tokens ---------------------------------------------------------------------------

    def spend(self, key: ServiceKey, tokens: int) -> None:
        """A call's tokens (no await: from the call log's record_call). Added to Redis
        within `SPEND_EVERY_S`, one INCRBY per key and batch."""
        self.local.spend(key, tokens)
        if key.daily_tokens is None or tokens <= 0 or self._redis is None:
            return
        self._spent[key.id] = self._spent.get(key.id, 0) + tokens
        self._flush_later(SPEND_EVERY_S)

    def _flush_later(self, delay_s: float) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_later(delay_s, self._start_flush)

    def _start_flush(self) -> None:
        self._flush_scheduled = False
        self._background(self.flush_spent())

    async def flush_spent(self) -> None:
        batch, self._spent = self._spent, {}
        if not batch or self._redis is None:
            return
        for key_id, tokens in batch.items():
            self._flushing[key_id] = self._flushing.get(key_id, 0) + tokens
        day, _ = day_of(time.time())
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key_id, tokens in batch.items():
                    name = self._keys(key_id, day)[2]
                    pipe.incrby(name, tokens).expire(name, 2 * 86400)
                totals = (await pipe.execute())[::2]
        except (RedisError, OSError) as exc:
            self._failed(exc)  # this worker's own count (local) still has them, and so
            totals = []  # will Redis: dropped, the cluster's budget forgot them once it was back
            for key_id, tokens in batch.items():
                self._spent[key_id] = self._spent.get(key_id, 0) + tokens
            self._flush_later(RETRY_S)
        finally:
            for key_id, tokens in batch.items():
                self._flushing[key_id] -= tokens
                if not self._flushing[key_id]:
                    del self._flushing[key_id]
        for key_id, total in zip(batch, totals, strict=False):
            st = self._reserves.get(key_id)
            if st is not None and st.tokens_day == day:
                st.tokens, st.tokens_at = max(st.tokens, int(total)), time.monotonic()

    # -- Redis away -----------------------------------------------------------------------

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
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        for key_id, st in self._reserves.items():  # what this worker holds goes back
            self._hand_back(key_id, *st.everything())
        self._reserves.clear()
        await self.flush_spent()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2)
        if self._redis is not None:
            await self._redis.aclose()


def _quietly(task: asyncio.Task[Round]) -> None:
    """A reservation in the background: its failure was logged by `_failed`."""
    if not task.cancelled():
        task.exception()
