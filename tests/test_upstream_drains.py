"""One endpoint taken out of service by hand, in every worker, and back; and what the upstream
health view says about each endpoint (observed latency and when, the configuration's name).

Against the real app and worker processes on PostgreSQL, the emulator playing the replicas.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx

from callout_server.llm import Endpoint, LLMConfig
from callout_server.llm.client import LLMClient
from callout_server.upstream import Drain, Upstreams
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body
from tests.support.nlu import answer, decide, nlu_app
from tests.test_nlu_decide import records

CONFIGS = "/api/admin/llm-configs"
DRAIN, UNDRAIN = "/api/admin/upstreams/drain", "/api/admin/upstreams/undrain"


async def _save(client: Any, **fields: Any) -> dict[str, Any]:
    r = await client.post(CONFIGS, headers=ADMIN_HEADERS, json=llm_config_body(**fields))
    assert r.status_code == 201, r.text
    return dict(r.json())


async def _views(client: Any) -> dict[str, dict[str, Any]]:
    r = await client.get("/api/admin/upstreams", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return {i["base_url"]: i for i in r.json()["items"]}


def test_a_drained_endpoint_takes_no_new_request_and_frees_no_slot() -> None:
    cfg = LLMConfig(tier="nlu", name="p", base_url="http://a/v1", model="m", id=7,
                    endpoints=(Endpoint("http://b/v1"),), max_in_flight=1)
    ups = Upstreams(LLMClient(), rng=random.Random(1))
    pool = ups.pool(cfg)
    a, b = pool.endpoints
    ups.set_drains({("7", "http://b/v1"): Drain("ops", time.time())})
    assert {pool.pick(time.monotonic(), ups.rng)[0] for _ in range(50)} == {a}  # type: ignore[index]
    assert pool.last_resort([a]) is None and not b.has_room(None)
    a.begin(probe=False)  # the only endpoint in service is full: a slot is worth a wait...
    assert pool.full() is True
    ups.set_drains({("7", "http://a/v1"): Drain("ops", time.time()),
                    ("7", "http://b/v1"): Drain("ops", time.time())})
    assert pool.full() is False  # ...unless it is drained too: no slot will come
    ups.set_drains({})
    assert b.has_room(None) and b.view()["drained"] is False


async def test_drain_one_replica_then_all_then_back(make_settings: Any, pg_url: str,
                                                    emulator: Any) -> None:
    model, backup = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"content": answer("agree")})
    await emulator.script_replica(backup, None, {"content": answer("refuse")})
    a, b = emulator.replica_url("gpu-1"), emulator.replica_url("gpu-2")
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        fb = await _save(client, name="backup", model=backup, base_url=emulator.replica_url("f"))
        pool = await _save(client, name="pool", model=model, base_url=a,
                           endpoints=[{"base_url": b}], fallback_ids=[fb["id"]], is_active=True)
        key = str(pool["id"])
        r = await client.post(DRAIN, headers=ADMIN_HEADERS, json={"config": key, "base_url": b})
        assert r.status_code == 200, r.text
        assert (r.json()["drained"], r.json()["drained_by"]) == (True, "admin-token")
        version = (await client.get(f"{CONFIGS}/{pool['id']}", headers=ADMIN_HEADERS)).json()["version"]
        assert version == pool["version"]  # the configuration itself is untouched
        for _ in range(10):
            assert (await decide(client, fallback_intent="refuse"))[0].json()["intent"] == "agree"
        assert {x["endpoint"] for x in await records(client)} == {a}
        views = await _views(client)
        assert views[b]["drained"] is True and views[b]["drained_by"] == "admin-token"
        assert views[b]["drained_at"].endswith("Z") and views[a]["drained"] is False

        # Both replicas out: the fallback answers every call.
        await client.post(DRAIN, headers=ADMIN_HEADERS, json={"config": key, "base_url": a + "/"})
        for _ in range(5):
            r, _ = await decide(client, fallback_intent="agree")
            assert r.json()["intent"] == "refuse" and r.json()["fallback"] is False, r.text
        # Back in service: traffic returns.
        for url in (a, b):
            r = await client.post(UNDRAIN, headers=ADMIN_HEADERS, json={"config": key, "base_url": url})
            assert r.status_code == 200 and r.json()["drained"] is False
        for _ in range(40):
            assert (await decide(client, fallback_intent="refuse"))[0].json()["intent"] == "agree"
        seen = {x["endpoint"] for x in await records(client, limit=40)}  # newest first
        assert b in seen and seen <= {a, b}  # the replica drained longest is back too
        again = await client.post(UNDRAIN, headers=ADMIN_HEADERS, json={"config": key, "base_url": a})
        assert again.status_code == 200 and again.json()["drained"] is False  # nothing to undo

        trail = (await client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                                  params={"action": "upstream"})).json()["items"]
        assert [(e["action"], e["detail"]["base_url"]) for e in reversed(trail)] == [
            ("upstream.drain", b), ("upstream.drain", a), ("upstream.undrain", a),
            ("upstream.undrain", b)]
        assert trail[0]["target"] == f"endpoint:{key}" and trail[0]["detail"]["name"] == "pool"

        # Only an endpoint of that pool; keys as the health view names them.
        for body, status in (({"config": key, "base_url": "http://elsewhere/v1"}, 404),
                             ({"config": "999999", "base_url": a}, 404),
                             ({"config": "pool", "base_url": a}, 422),
                             ({"config": "file:nlu", "base_url": a}, 404)):
            r = await client.post(DRAIN, headers=ADMIN_HEADERS, json=body)
            assert r.status_code == status, (body, r.text)
        assert (await client.post(DRAIN, json={"config": key, "base_url": a})).status_code == 401


async def test_a_config_toml_endpoint_is_drained_too(make_settings: Any, pg_url: str,
                                                     emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        url = emulator.base_url("vllm")
        r = await client.post(DRAIN, headers=ADMIN_HEADERS, json={"config": "file:nlu", "base_url": url})
        assert r.status_code == 200, r.text
        r, _ = await decide(client, deadline_ms=1500)
        assert r.status_code >= 500 and r.json()["error"]["diagnostic"]["code"]  # nowhere to go
        assert (await _views(client))[url]["drained"] is True
        await client.post(UNDRAIN, headers=ADMIN_HEADERS, json={"config": "file:nlu", "base_url": url})
        assert (await decide(client))[0].status_code == 200


async def test_the_view_says_what_was_observed_and_whose_endpoint_it_is(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree"), "ttft_ms": 30})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        file_url = emulator.base_url("vllm")
        for _ in range(3):
            assert (await decide(client))[0].status_code == 200
        await _save(client, name="db-nlu", model=model, base_url=emulator.replica_url("x"),
                    is_active=True)
        view = (await _views(client))[file_url]
        # No longer serving, still named: config.toml's section, its name and tier.
        assert (view["config"], view["config_name"], view["tier"], view["role"]) == (
            "file:nlu", "nlu-default", "nlu", None)
        assert view["last_latency_ms"] >= 30 and view["median_latency_ms"] >= 30
        assert view["last_answered_at"].endswith("Z")


async def test_a_drain_reaches_every_worker(start_worker: Any, emulator: Any) -> None:
    """Through the configuration bus: saved on one worker, applied by the other."""
    model = emulator.unique_model("qwen2.5-7b")
    a, b = emulator.replica_url("gpu-1"), emulator.replica_url("gpu-2")
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(headers=ADMIN_HEADERS, timeout=30) as c:
        pool = (await c.post(f"{one.url}{CONFIGS}", json=llm_config_body(
            model=model, base_url=a, endpoints=[{"base_url": b}], is_active=True))).json()
        r = await c.post(f"{one.url}{DRAIN}", json={"config": str(pool["id"]), "base_url": b})
        assert r.status_code == 200, r.text

        async def drained_on_two() -> bool:
            items = (await c.get(f"{two.url}/api/admin/upstreams")).json()["items"]
            return any(i["base_url"] == b and i["drained"] for i in items)

        deadline = time.monotonic() + 10
        while not await drained_on_two():
            assert time.monotonic() < deadline, "the second worker never heard of the drain"
            await asyncio.sleep(0.1)
