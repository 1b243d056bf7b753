"""A service key's limits: exact across workers (counted in Redis, atomically), a 429 with
a stable code and Retry-After for each, and each worker's share when Redis is away.

Against real Redis, real `serve` processes and the real app on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from callout_server.service_keys.errors import LimitExceeded
from callout_server.service_keys.limits import KeyLimiter
from callout_server.service_keys.reserve import day_of
from callout_server.service_keys.table import ServiceKey
from tests.fixtures.database import EN, REDIS_URL
from tests.fixtures.tcp_proxy import TcpProxy
from tests.support.keys import bearer, create_key
from tests.support.nlu import DECIDE, answer, decide_body, nlu_app

DEAD_REDIS = "redis://127.0.0.1:1/0"


def _key(**limits: Any) -> ServiceKey:
    return ServiceKey(id=1, name="k", prefix="csk_x", tiers=frozenset({"nlu"}), **limits)


async def test_a_burst_split_over_two_workers_never_exceeds_the_limit(
        start_worker: Any) -> None:
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(timeout=30) as c:
        created = await create_key(c, one.url, tiers=["nlu"], rpm=12)
        for w in (one, two):  # both workers know the key
            deadline = time.monotonic() + 10
            while (await c.get(f"{w.url}/api/auth/me", headers=bearer(created))).status_code != 200:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)

        async def hit(url: str) -> httpx.Response:
            # An empty body: the gate counts it before the route refuses it (422).
            return await c.post(f"{url}{DECIDE}", headers={**bearer(created), **EN}, json={})

        answers = await asyncio.gather(*(hit(w.url) for _ in range(20) for w in (one, two)))
        admitted = [r for r in answers if r.status_code != 429]
        refused = [r for r in answers if r.status_code == 429]
        assert len(admitted) == 12 and {r.status_code for r in admitted} == {422}
        assert len(refused) == 28
        for r in refused:
            assert r.json()["error"]["code"] == "rate_limited", r.text
            # Until the oldest admission leaves the window: 60 s after the end of the hold
            # ([service_keys] reserve_s, 1 s) in which its worker could have used it.
            assert 1 <= int(r.headers["retry-after"]) <= 61
            assert "12" in r.json()["error"]["message"]


async def test_in_flight_and_daily_tokens(make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree"), "ttft_ms": 400})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        created = await create_key(client, tiers=["nlu"], max_in_flight=2)
        headers = {**bearer(created), **EN}

        async def call() -> httpx.Response:
            return await client.post(DECIDE, headers=headers, json=decide_body(deadline_ms=5000))

        answers = await asyncio.gather(*(call() for _ in range(5)))
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 200, 429, 429, 429], [r.text for r in answers]
        refused = next(r for r in answers if r.status_code == 429)
        assert refused.json()["error"]["code"] == "too_many_in_flight"
        assert refused.headers["retry-after"] == "1"
        assert (await call()).status_code == 200  # the slots came back

        # The budget counts what the vendor reported, after the call.
        budget = await create_key(client, tiers=["nlu"], daily_tokens=5)
        r = await client.post(DECIDE, headers=bearer(budget), json=decide_body())
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 10
        while True:
            r = await client.post(DECIDE, headers={**bearer(budget), **EN}, json=decide_body())
            if r.status_code == 429:
                break
            assert time.monotonic() < deadline, "the budget was never reached"
            await asyncio.sleep(0.05)
        assert r.json()["error"]["code"] == "budget_exhausted"
        assert 1 <= int(r.headers["retry-after"]) <= 86400
        # Raising the budget lets it through again, on the next request.
        await client.put(f"/api/admin/service-keys/{budget['id']}",
                         headers={"Authorization": "Bearer test-admin-token"},
                         json={"daily_tokens": 10**9})
        assert (await client.post(DECIDE, headers=bearer(budget),
                                  json=decide_body())).status_code == 200


async def test_two_limiters_on_one_redis_count_one_limit(redis_prefix: str) -> None:
    a, b = (KeyLimiter(REDIS_URL, redis_prefix) for _ in range(2))
    key = _key(rpm=7, max_in_flight=50)
    try:
        async def one(limiter: KeyLimiter) -> bool:
            try:
                await limiter.acquire(key)
            except LimitExceeded as exc:
                assert exc.code == "rate_limited"
                return False
            return True

        results = await asyncio.gather(*(one(x) for _ in range(15) for x in (a, b)))
        assert sum(results) == 7 and a.state == b.state == "redis"
    finally:
        await a.aclose()
        await b.aclose()


async def test_tokens_spent_while_redis_is_away_reach_it_once_it_is_back(
        redis_prefix: str) -> None:
    """A batch of tokens Redis refused used to be dropped: after the outage the cluster's
    daily budget counted from what Redis had before it, and the key spent it over again."""
    proxy = TcpProxy(target_port=6379)
    await proxy.start()
    limiter = KeyLimiter(f"redis://127.0.0.1:{proxy.port}/0", redis_prefix, timeout_s=0.2)
    direct = aioredis.from_url(REDIS_URL)
    key = _key(daily_tokens=10_000, rpm=1000, max_in_flight=50)
    name = f"{redis_prefix}:sk:1:tokens:{day_of(time.time())[0]}"

    async def counted(tokens: int) -> bool:
        return int(await direct.get(name) or 0) == tokens

    async def gone_local() -> bool:
        return limiter.state == "local"

    async def until(cond: Callable[[], Awaitable[bool]]) -> None:
        deadline = time.monotonic() + 10
        while not await cond():
            assert time.monotonic() < deadline, "not reached in time"
            await asyncio.sleep(0.02)

    try:
        await limiter.release(key, await limiter.acquire(key))
        limiter.spend(key, 1000)
        await until(lambda: counted(1000))
        proxy.cut(refuse=True)
        limiter.spend(key, 3000)
        await until(gone_local)  # its flush failed
        proxy.restore()
        await until(lambda: counted(4000))
    finally:
        await limiter.aclose()
        await direct.delete(name)
        await direct.aclose()
        await proxy.stop()


async def test_without_redis_each_worker_allows_its_share(
        caplog: pytest.LogCaptureFixture) -> None:
    limiter = KeyLimiter(DEAD_REDIS, "p", workers=3, timeout_s=0.2)
    key = _key(rpm=10, max_in_flight=6, daily_tokens=30)
    try:
        with caplog.at_level(logging.WARNING, "callout_server.service_keys.limits"):
            leases = [await limiter.acquire(key), await limiter.acquire(key)]
        assert limiter.state == "local"
        assert "redis unreachable" in caplog.text and "1/3" in caplog.text
        with pytest.raises(LimitExceeded) as exc:
            await limiter.acquire(key)  # 6 // 3 in flight
        assert exc.value.code == "too_many_in_flight"
        for lease in leases:
            await limiter.release(key, lease)
        await limiter.acquire(key)  # 3 of 10 // 3 a minute
        with pytest.raises(LimitExceeded) as exc:
            await limiter.acquire(key)
        assert exc.value.code == "rate_limited" and exc.value.retry_after_s >= 1
        limiter.spend(key, 10)
        with pytest.raises(LimitExceeded) as exc:
            await limiter.acquire(key)  # 30 // 3 tokens today
        assert exc.value.code == "budget_exhausted"
    finally:
        await limiter.aclose()


async def test_healthz_says_limits_are_local_when_redis_is_away(
        make_settings: Any, pg_url: str) -> None:
    from tests.fixtures.app import running_app
    from tests.fixtures.database import reset_tables

    await reset_tables(pg_url)
    async with running_app(make_settings(**{"redis.url": DEAD_REDIS})) as client:
        created = await create_key(client, tiers=["nlu"], rpm=1000)
        r = await client.post(DECIDE, headers=bearer(created), json={})
        assert r.status_code == 422  # admitted by the local share
        assert (await client.get("/healthz")).json()["key_limits"] == "local"
