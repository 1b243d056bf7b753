"""A worker's reserve of a key's limits (service_keys/reserve.py): admissions and slots taken
from Redis in batches, admitted from memory, topped up before they run out, handed back when
idle, and never more across workers than the limit.

Against a real Redis, with short windows set in configuration (`window_s`, `reserve_s`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import REGISTRY

from callout_server.service_keys.errors import LimitExceeded
from callout_server.service_keys.limits import KeyLimiter, Lease
from callout_server.service_keys.table import ServiceKey
from tests.fixtures.database import REDIS_URL


def _key(**limits: Any) -> ServiceKey:
    return ServiceKey(id=7, name="k", prefix="csk_x", tiers=frozenset({"nlu"}), **limits)


@asynccontextmanager
async def _limiters(prefix: str, n: int, **options: Any) -> AsyncIterator[list[KeyLimiter]]:
    limiters = [KeyLimiter(REDIS_URL, prefix, **options) for _ in range(n)]
    try:
        yield limiters
    finally:
        for limiter in limiters:
            await limiter.aclose()


async def _until(condition: Callable[[], Awaitable[bool]], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not await condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.02)


async def _try(limiter: KeyLimiter, key: ServiceKey) -> Lease | None:
    try:
        return await limiter.acquire(key)
    except LimitExceeded as exc:
        assert exc.code in ("rate_limited", "too_many_in_flight"), exc.code
        return None


async def test_two_workers_never_admit_more_than_the_limit_in_any_window(
        redis_prefix: str) -> None:
    window = 0.6
    key = _key(rpm=10)
    admitted: list[float] = []
    async with _limiters(redis_prefix, 2, workers=2, window_s=window, reserve_s=0.1) as both:
        async def one(limiter: KeyLimiter) -> None:
            if await _try(limiter, key) is not None:
                admitted.append(time.monotonic())

        first = time.monotonic()
        await asyncio.gather(*(one(x) for _ in range(15) for x in both))
        assert len(admitted) == 10  # both had more waiting than the limit: all of it is used
        while time.monotonic() < first + 3 * window:  # bursts over several windows
            await asyncio.gather(*(one(x) for _ in range(4) for x in both))
            await asyncio.sleep(0.01)
        assert all(x.state == "redis" for x in both)
    assert len(admitted) > 20  # the window rolled over, more than once
    for i, start in enumerate(admitted):
        assert sum(1 for t in admitted[i:] if t < start + window) <= 10


async def test_admissions_come_from_the_reserve_topped_up_in_the_background(
        redis_prefix: str) -> None:
    key = _key(rpm=10_000)
    async with _limiters(redis_prefix, 1, reserve_max=8) as (limiter,):
        redis = aioredis.from_url(REDIS_URL)
        window = f"{redis_prefix}:sk:{key.id}:rpm"
        try:
            for n in range(1, 101):
                await limiter.acquire(key)
                reserved = await redis.zcard(window)
                assert n <= reserved <= n + 1 + 8  # never more admitted than reserved
                await asyncio.sleep(0)  # the background top-up may run
            # One reservation per half batch (about 4 admissions), not one per request.
            assert limiter.rounds <= 100 // 4 + 2, limiter.rounds
            assert limiter.batch(10_000) == 8
        finally:
            await redis.aclose()


async def test_a_busy_key_reserves_half_a_second_of_its_traffic(
        redis_prefix: str) -> None:
    busy = _key(rpm=10**9, max_in_flight=10**6)
    async with _limiters(redis_prefix, 1) as (limiter,):
        # The batch follows this worker's rate for the key, within every cap.
        assert limiter.batch(10**9) == 32  # quiet: the floor
        assert limiter.batch(10**9, rate=400) == 200  # half a second of 400 a second
        assert limiter.batch(10**9, rate=10**6) == 512  # [service_keys] reserve_max
        assert limiter.batch(600, rate=2_000) == 150  # rpm // (4 x workers)
        assert limiter.spare(10**6) == 32  # idle slots: at least 32,
        assert limiter.spare(10**6, peak=64) == 64  # ... or as many as recently ran
        assert limiter.spare(100, peak=64) == 25  # within max_in_flight // (4 x workers)

        # Closed-loop load from 64 callers: a reservation per half second of it, not one
        # per 16 requests.
        done, stop = 0, time.monotonic() + 1.5
        waits_before = REGISTRY.get_sample_value("callout_key_limit_waits_total") or 0.0

        async def caller() -> None:
            nonlocal done
            while time.monotonic() < stop:
                lease = await limiter.acquire(busy)
                await asyncio.sleep(0.02)  # up to 3,200 requests a second
                await limiter.release(busy, lease)
                done += 1

        await asyncio.gather(*(caller() for _ in range(64)))
        assert done > 1_000
        assert limiter.rounds < done / 40, (limiter.rounds, done)
        # /metrics says how many waited: the first 64, for the first reservation, and few
        # after (a reservation is asked for while half of the last one is left).
        waits = (REGISTRY.get_sample_value("callout_key_limit_waits_total") or 0.0) - waits_before
        assert 1 <= waits < done / 10, (waits, done)


async def test_idle_admissions_and_slots_are_handed_back(redis_prefix: str) -> None:
    key = _key(rpm=8, max_in_flight=8)  # batch 8 // 4 = 2, spare slots 2
    redis = aioredis.from_url(REDIS_URL)
    base = f"{redis_prefix}:sk:{key.id}"
    try:
        async with _limiters(redis_prefix, 2, reserve_s=0.2) as (a, b):
            lease = await a.acquire(key)
            assert await redis.zcard(f"{base}:rpm") == 3  # its own and a batch of 2
            assert await redis.zcard(f"{base}:inflight") == 3  # its own and 2 spare
            await a.release(key, lease)  # 2 idle already: this one goes back at once

            async def handed_back() -> bool:
                return (await redis.zcard(f"{base}:rpm"), await redis.zcard(f"{base}:inflight")) \
                    == (1, 0)

            await _until(handed_back)
            # What A handed back is B's: the other 7 admissions of the minute.
            leases = [await _try(b, key) for _ in range(7)]
            assert all(leases) and await _try(b, key) is None
            assert await redis.zcard(f"{base}:inflight") <= 8
    finally:
        await redis.aclose()


async def test_in_flight_slots_are_exact_across_workers(redis_prefix: str) -> None:
    key = _key(max_in_flight=4)  # spare 4 // (4 x 2) = 0: no idle slot is held
    async with _limiters(redis_prefix, 2, workers=2) as (a, b):
        leases = await asyncio.gather(*(_try(x, key) for _ in range(10) for x in (a, b)))
        held = [(x, lease) for x, lease in zip([a, b] * 10, leases, strict=True) if lease]
        assert len(held) == 4
        for limiter, lease in held:
            await limiter.release(key, lease)

        async def room_again() -> bool:
            got = await _try(b, key)
            if got is not None:
                await b.release(key, got)
            return got is not None

        await _until(room_again)


async def test_the_window_rolls_over(redis_prefix: str) -> None:
    key = _key(rpm=3)
    async with _limiters(redis_prefix, 1, window_s=0.5, reserve_s=0.1) as (limiter,):
        start = time.monotonic()
        for _ in range(3):
            await limiter.acquire(key)
        refused = await _try(limiter, key)
        assert refused is None

        async def admitted() -> bool:
            return await _try(limiter, key) is not None

        await _until(admitted)
        assert time.monotonic() - start >= 0.5  # not before the window moved on


async def test_a_budget_spent_on_one_worker_is_seen_by_another(redis_prefix: str) -> None:
    key = _key(daily_tokens=10)
    async with _limiters(redis_prefix, 2) as (a, b):
        await a.release(key, await a.acquire(key))
        await b.release(key, await b.acquire(key))  # B read today's total: 0
        a.spend(key, 12)
        await a.flush_spent()

        async def refused_on_b() -> bool:
            try:
                await b.release(key, await b.acquire(key))
            except LimitExceeded as exc:
                assert exc.code == "budget_exhausted"
                return True
            return False

        await _until(refused_on_b)  # within about a second (TOKENS_FRESH_S)


async def test_a_request_with_room_in_the_reserve_never_waits_for_redis(
        redis_prefix: str) -> None:
    key = _key(rpm=10_000, max_in_flight=1_000, daily_tokens=10**9)
    async with _limiters(redis_prefix, 1, reserve_max=8) as (limiter,):
        await limiter.release(key, await limiter.acquire(key))  # the first reservation
        step = limiter.acquire(key)
        try:
            step.send(None)  # runs to its end without suspending once: no round trip
        except StopIteration as done:
            lease = done.value
        else:
            step.close()
            raise AssertionError("acquire waited although the reserve had room")
        assert lease.where == "redis" and lease.slot is not None
        await limiter.release(key, lease)
