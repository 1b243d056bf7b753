"""Hot refresh across two real worker processes on one PostgreSQL and one Redis.

A change through worker A must be served by worker B within 1 s (Redis), or within the
poll interval when Redis is unset or down. PostgreSQL going away (a TCP proxy we cut in
front of it) must leave the snapshot served, turn admin writes into 503, and heal itself.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, core, llm_config_body
from tests.fixtures.tcp_proxy import TcpProxy

URL = "/api/admin/llm-configs"


async def _health(client: httpx.AsyncClient, worker) -> dict:
    return (await client.get(f"{worker.url}/healthz")).json()


async def _wait_generation(client, worker, generation: int, timeout_s: float) -> float:
    """Seconds until `worker` serves `generation` (fails after timeout_s)."""
    start = time.monotonic()
    while True:
        if (await _health(client, worker))["config_generation"] >= generation:
            return time.monotonic() - start
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"{worker.name} still not at generation {generation}")
        await asyncio.sleep(0.01)


async def _change(client, worker, **fields) -> int:
    r = await client.post(f"{worker.url}{URL}", json=llm_config_body(**fields),
                          headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return (await _health(client, worker))["config_generation"]


async def test_change_on_a_reaches_b_within_a_second_via_redis(start_worker) -> None:
    a, b = await asyncio.gather(start_worker("a"), start_worker("b"))
    async with httpx.AsyncClient(timeout=5) as client:
        for worker in (a, b):
            assert core(await _health(client, worker)) == {
                "status": "ok", "db": "ok", "redis": "ok", "config_generation": 0}
        for i in range(5):
            generation = await _change(client, a, name=f"m{i}", model=f"model-{i}",
                                       is_active=True)
            assert await _wait_generation(client, b, generation, timeout_s=1.0) < 1.0
            active = (await client.get(f"{b.url}/api/admin/llm-active",
                                       headers=ADMIN_HEADERS)).json()
            assert active["generation"] == generation
            assert active["tiers"]["nlu"]["source"] == "db"
            assert active["tiers"]["nlu"]["config"]["model"] == f"model-{i}"


async def test_without_redis_b_catches_up_by_polling(start_worker) -> None:
    env = {"CALLOUT_POLL_INTERVAL_S": "0.5"}
    a, b = await asyncio.gather(start_worker("a", redis=False, **env),
                                start_worker("b", redis=False, **env))
    async with httpx.AsyncClient(timeout=5) as client:
        assert core(await _health(client, b)) == {
            "status": "ok", "db": "ok", "redis": "disabled", "config_generation": 0}
        for i in range(3):
            generation = await _change(client, a, name=f"p{i}", is_active=True)
            # within the poll interval (+ scheduling slack)
            assert await _wait_generation(client, b, generation, timeout_s=1.0) < 1.0


async def test_redis_down_degrades_and_polls(start_worker) -> None:
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    env = {"CALLOUT_POLL_INTERVAL_S": "0.5", "CALLOUT_REDIS_URL": dead_redis}
    a, b = await asyncio.gather(start_worker("a", **env), start_worker("b", **env))
    async with httpx.AsyncClient(timeout=5) as client:
        health = await _health(client, b)
        assert health["status"] == "degraded" and health["redis"] == "down"
        assert health["db"] == "ok"
        generation = await _change(client, a, name="r", is_active=True)  # write still works
        assert await _wait_generation(client, b, generation, timeout_s=1.0) < 1.0


async def test_database_down_serves_snapshot_refuses_writes_and_recovers(
        start_worker, pg_url) -> None:
    proxy = TcpProxy()
    await proxy.start()
    proxied = proxy.url_for(pg_url)
    env = {"CALLOUT_POLL_INTERVAL_S": "0.5"}
    a = await start_worker("a", **env)
    b = await start_worker("b", database_url=proxied, **env)
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            generation = await _change(client, b, name="before", model="m-before",
                                       is_active=True)
            await _wait_generation(client, a, generation, timeout_s=1.0)

            proxy.cut(refuse=True)
            start = time.monotonic()
            while (await _health(client, b))["db"] != "down":
                assert time.monotonic() - start < 5, "b never noticed the database is gone"
                await asyncio.sleep(0.05)
            health = await _health(client, b)
            assert health["status"] == "degraded" and health["config_generation"] == generation
            # The snapshot keeps being served (auth is in memory too).
            active = await client.get(f"{b.url}/api/admin/llm-active", headers=ADMIN_HEADERS)
            assert active.status_code == 200
            assert active.json()["tiers"]["nlu"]["config"]["model"] == "m-before"
            # Writes: a clear 503, quickly.
            t0 = time.monotonic()
            r = await client.post(f"{b.url}{URL}", json=llm_config_body(name="during"),
                                  headers=ADMIN_HEADERS)
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "database_unavailable"
            assert time.monotonic() - t0 < 8
            # Meanwhile the cluster moves on through worker A.
            newer = await _change(client, a, name="while-down", model="m-new", is_active=True)

            proxy.restore()  # the database is back: b heals without a restart
            await _wait_generation(client, b, newer, timeout_s=5.0)
            health = await _health(client, b)
            assert health["db"] == "ok" and health["status"] == "ok"
            active = (await client.get(f"{b.url}/api/admin/llm-active",
                                       headers=ADMIN_HEADERS)).json()
            assert active["tiers"]["nlu"]["config"]["model"] == "m-new"
            r = await client.post(f"{b.url}{URL}", json=llm_config_body(name="after"),
                                  headers=ADMIN_HEADERS)
            assert r.status_code == 201
    finally:
        await proxy.stop()


async def test_workers_on_one_sqlite_file_converge_by_polling(start_worker, tmp_path) -> None:
    """What `serve --help` says of several workers: no PostgreSQL or Redis needed."""
    env = {"CALLOUT_POLL_INTERVAL_S": "0.5"}
    sqlite = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    a, b = await asyncio.gather(start_worker("a", redis=False, database_url=sqlite, **env),
                                start_worker("b", redis=False, database_url=sqlite, **env))
    async with httpx.AsyncClient(timeout=5) as client:
        assert core(await _health(client, b)) == {
            "status": "ok", "db": "ok", "redis": "disabled", "config_generation": 0}
        for i in range(2):
            generation = await _change(client, a, name=f"s{i}", model=f"sqlite-{i}",
                                       is_active=True)
            assert await _wait_generation(client, b, generation, timeout_s=1.5) < 1.5
            active = (await client.get(f"{b.url}/api/admin/llm-active",
                                       headers=ADMIN_HEADERS)).json()
            assert active["tiers"]["nlu"]["config"]["model"] == f"sqlite-{i}"
