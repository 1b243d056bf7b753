"""A canary across two real worker processes (tests/fixtures/app.py ServerProcess) on
PostgreSQL and Redis, the emulator playing both models: every request of one phone call
lands on the same side whichever worker serves it, the share is the one asked for, and a
candidate that fails is rolled back by itself, on both workers, within a bounded number of
bad calls."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg
import httpx

from callout_server.canary.split import basis_points, on_canary
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, asyncpg_dsn, llm_config_body
from tests.support.nlu import answer, decide_body

CANARIES, CONFIGS = "/api/admin/canaries", "/api/admin/llm-configs"


async def _config(c: httpx.AsyncClient, url: str, emulator: Any, model: str,
                  **fields: Any) -> dict[str, Any]:
    r = await c.post(f"{url}{CONFIGS}", json=llm_config_body(
        **{"model": model, "base_url": emulator.base_url("vllm"), **fields}))
    assert r.status_code == 201, r.text
    return dict(r.json())


async def _salt(pg_url: str, canary_id: int) -> bytes:
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        return bytes.fromhex(await conn.fetchval(
            "SELECT salt FROM callout.canaries WHERE id = $1", canary_id))
    finally:
        await conn.close()


async def _intent(c: httpx.AsyncClient, url: str, call_id: str) -> dict[str, Any]:
    r = await c.post(f"{url}/api/nlu/decide", headers=SERVICE_HEADERS,
                     json=decide_body(call_id=call_id, fallback_intent="refuse"))
    assert r.status_code == 200, r.text
    return dict(r.json())


async def _until(condition: Any, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not await condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.05)


async def test_two_workers_split_alike_and_roll_back_together(
        start_worker: Any, emulator: Any, pg_url: str) -> None:
    active, cand, broken = (emulator.unique_model("qwen2.5-7b") for _ in range(3))
    await emulator.script(active, {"content": answer("agree")})
    await emulator.script(cand, {"content": answer("agree", time="明天")})
    await emulator.script(broken, {"content": "no JSON here"})  # invalid_json: a fallback
    one, two = await start_worker("one"), await start_worker("two")
    workers = (one.url, two.url)
    async with httpx.AsyncClient(headers=ADMIN_HEADERS, timeout=30) as c:
        await _config(c, one.url, emulator, active, name="active", is_active=True)
        candidate = await _config(c, one.url, emulator, cand, name="candidate")

        async def serves_active_on_both() -> bool:
            got = [await _intent(c, u, "warm-up") for u in workers]
            return all(g["model"] == active for g in got)

        await _until(serves_active_on_both)
        r = await c.post(f"{one.url}{CANARIES}", json={
            "candidate_id": candidate["id"], "percent": 30, "rollback": {"min_calls": 1000}})
        assert r.status_code == 201, r.text
        canary = r.json()
        salt, points = await _salt(pg_url, canary["id"]), basis_points(30)

        # Thousands of calls through the split itself: the share within a point.
        share = sum(on_canary(salt, f"call-{i}", points) for i in range(20_000)) / 20_000
        assert abs(share - 0.30) < 0.01, share

        async def canary_on_both() -> bool:  # the snapshot reached both workers
            ids = [f"probe-{i}" for i in range(40) if on_canary(salt, f"probe-{i}", points)]
            got = [(await _intent(c, u, ids[0]))["model"] for u in workers]
            return got == [cand, cand]

        await _until(canary_on_both)
        # Over HTTP, every call on both workers: each call's side is the split's, whichever
        # worker answers (the share itself was checked on the split above).
        calls = [f"call-{i}" for i in range(120)]
        for start in range(0, len(calls), 20):
            batch = calls[start:start + 20]
            got = await asyncio.gather(*(_intent(c, u, call_id)
                                         for call_id in batch for u in workers))
            for n, call_id in enumerate(batch):
                want = cand if on_canary(salt, call_id, points) else active
                assert {got[2 * n]["model"], got[2 * n + 1]["model"]} == {want}, call_id
        on_canary_side = sum(on_canary(salt, call_id, points) for call_id in calls)
        assert 0 < on_canary_side < len(calls)

        async def counted() -> bool:  # figures over both workers' records
            figures = (await c.get(f"{two.url}{CANARIES}/{canary['id']}")).json()["figures"]
            return bool(figures["canary"]["calls"] >= 2 * on_canary_side)

        await _until(counted)
        r = await c.post(f"{two.url}{CANARIES}/{canary['id']}/stop")
        assert r.status_code == 200 and r.json()["status"] == "stopped", r.text

        # A broken candidate: rolled back by itself, on both workers.
        bad = await _config(c, one.url, emulator, broken, name="broken")
        r = await c.post(f"{two.url}{CANARIES}", json={
            "candidate_id": bad["id"], "percent": 50,
            "rollback": {"max_fallback_rate": 0.2, "min_calls": 20}})
        assert r.status_code == 201, r.text
        url = f"{one.url}{CANARIES}/{r.json()['id']}"
        fallbacks, i = 0, 0

        async def rolled_back() -> bool:
            nonlocal fallbacks, i
            for u in workers:
                i += 1
                fallbacks += (await _intent(c, u, f"bad-{i}"))["fallback"]
            return bool((await c.get(url)).json()["status"] == "rolled_back")

        await _until(rolled_back, timeout_s=30)
        ended = (await c.get(url)).json()
        assert ended["reason"]["limit"] == "fallback_rate" and ended["reason"]["calls"] >= 20
        # Bounded: the minimum, plus what reached the canary side while the records were
        # flushed (0.5 s), checked (1 s) and the rollback published.
        assert 20 <= fallbacks <= 120, fallbacks

        async def back_on_both() -> bool:
            got = [await _intent(c, u, f"after-{time.monotonic_ns()}-{k}")
                   for u in workers for k in range(10)]
            return not any(g["fallback"] for g in got)

        started = time.monotonic()
        await _until(back_on_both, timeout_s=5)
        assert time.monotonic() - started < 2.0  # every worker follows within a second
        trail = (await c.get(f"{two.url}/api/admin/audit", params={"action": "canary"})).json()
        assert [e["action"] for e in trail["items"]][:2] == ["canary.rollback", "canary.start"]
