"""Endpoint health across real worker processes (`serve`, PostgreSQL, Redis): an endpoint one
worker cooled down is avoided by the other within a second, with no call of its own there;
a worker whose Redis cannot be reached goes by its own view; the hot path leaves Redis alone.

The emulator plays the replicas; the dead one answers 503 with a long Retry-After (a node in
maintenance: cooled at once, for longer than the test), so every request it gets is counted.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.nlu import DECIDE, answer, decide, decide_body, nlu_app

CONFIGS = "/api/admin/llm-configs"


async def _state(c: httpx.AsyncClient, worker: Any, url: str) -> str | None:
    items = (await c.get(f"{worker.url}/api/admin/upstreams")).json()["items"]
    return next((i["state"] for i in items if i["base_url"] == url), None)


async def test_a_cool_down_on_one_worker_keeps_the_other_off_the_endpoint(
        start_worker: Any, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    live, dead = emulator.replica_url("live"), emulator.replica_url("dead")
    await emulator.script_replica(model, "live", {"content": answer("agree")})
    await emulator.script_replica(model, "dead", {"status": 503,
                                                  "headers": {"Retry-After": "60"}})
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(headers=ADMIN_HEADERS, timeout=30) as c:
        r = await c.post(f"{one.url}{CONFIGS}", json=llm_config_body(
            model=model, base_url=live, endpoints=[{"base_url": dead}], is_active=True))
        assert r.status_code == 201, r.text

        async def serving(worker: Any) -> bool:
            active = (await c.get(f"{worker.url}{CONFIGS}", params={"tier": "nlu"})).json()
            return any(i["model"] == model and i["is_active"] for i in active["items"])

        for worker in (one, two):  # the configuration reached both
            deadline = time.monotonic() + 10
            while not await serving(worker):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)

        # Worker one finds the dead replica (the calls fail over to the live one).
        deadline = time.monotonic() + 10
        while await _state(c, one, dead) != "cooling_down":
            assert time.monotonic() < deadline, "worker one never cooled the replica down"
            r = await c.post(f"{one.url}{DECIDE}", headers=SERVICE_HEADERS, json=decide_body())
            assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
        cooled_at = time.monotonic()

        # Worker two hears of it within a second, without a call of its own.
        while await _state(c, two, dead) != "cooling_down":
            assert time.monotonic() - cooled_at < 1.0, "worker two did not hear in time"
            await asyncio.sleep(0.02)
        hits = len([x for x in await emulator.requests(model) if x["replica"] == "dead"])

        for _ in range(20):
            r = await c.post(f"{two.url}{DECIDE}", headers=SERVICE_HEADERS, json=decide_body())
            assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
        requests = await emulator.requests(model)
        assert len([x for x in requests if x["replica"] == "dead"]) == hits  # none from two
        assert len([x for x in requests if x["replica"] == "live"]) >= 20


async def test_an_unreachable_redis_leaves_the_worker_on_its_own_view(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    """The whole app pointed at a Redis nothing listens on: it serves, finds the dead replica
    itself and keeps off it, as a worker without Redis does."""
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    dead = f"http://127.0.0.1:{free_port()}/v1"  # refuses connections
    async with nlu_app(make_settings, pg_url, emulator, model,
                       **{"redis.url": f"redis://127.0.0.1:{free_port()}/0",
                          "llm.nlu.endpoints": [{"base_url": dead}]}) as client:
        shared = client.services.upstreams.shared  # type: ignore[attr-defined]
        assert shared is not None and shared.channel.available is False
        for _ in range(10):
            r, _ = await decide(client)
            assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
        views = {v["base_url"]: v for v in
                 (await client.get("/api/admin/upstreams", headers=ADMIN_HEADERS)).json()["items"]}
        assert views[dead]["state"] in ("cooling_down", "probing")
        assert views[emulator.base_url("vllm")]["state"] == "healthy"


async def test_the_hot_path_sends_nothing_to_redis(make_settings: Any, pg_url: str,
                                                   emulator: Any) -> None:
    """Health is pushed and read from memory: healthy calls never touch the channel."""
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        shared = client.services.upstreams.shared  # type: ignore[attr-defined]
        assert shared is not None
        channel = shared.channel
        used: list[str] = []
        publish, lease = channel.publish, channel.lease

        def counted_publish(notice: Any) -> None:
            used.append("publish")
            publish(notice)

        async def counted_lease(endpoint: str, ttl_s: float) -> bool | None:
            used.append("lease")
            return await lease(endpoint, ttl_s)

        channel.publish, channel.lease = counted_publish, counted_lease
        for _ in range(30):
            assert (await decide(client))[0].status_code == 200
        assert used == []
