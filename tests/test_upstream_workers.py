"""Endpoint health across real worker processes (`serve`, PostgreSQL, Redis): an endpoint one
worker cooled down is avoided by the other within a second, with no call of its own there.

The emulator plays the replicas; the dead one answers 503 with a long Retry-After (a node in
maintenance: cooled at once, for longer than the test), so every request it gets is counted.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.nlu import DECIDE, answer, decide_body

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
