"""A worker that starts while PostgreSQL is down serves from config.toml and heals by itself."""

from __future__ import annotations

import asyncio
import time

from tests.fixtures.app import running_app
from tests.fixtures.database import (
    ADMIN_HEADERS,
    ADMIN_PASSWORD,
    ADMIN_USER,
    SERVICE_HEADERS,
    llm_config_body,
    reset_tables,
)
from tests.fixtures.tcp_proxy import TcpProxy

NODE = {"utterance": "好的，可以", "intents": [{"name": "agree"}, {"name": "refuse"}]}


async def _eventually(check, timeout_s: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not await check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.1)


async def test_worker_starts_serves_and_heals_while_the_database_is_down(
        pg_url, make_settings, emulator) -> None:  # type: ignore[no-untyped-def]
    await reset_tables(pg_url)
    proxy = TcpProxy()
    await proxy.start()
    proxy.cut(refuse=True)
    model = emulator.unique_model("qwen3.5-2b")
    settings = make_settings(**{
        "database.url": proxy.url_for(pg_url), "database.connect_timeout_s": 0.5,
        "redis.poll_interval_s": 0.2,
        "llm.nlu.base_url": emulator.base_url("vllm"), "llm.nlu.model": model})
    try:
        async with running_app(settings) as c:
            health = (await c.get("/healthz")).json()
            assert (health["status"], health["db"]) == ("degraded", "down")
            # Dialer traffic is served from config.toml with the environment's tokens.
            r = await c.post("/api/nlu/decide", headers=SERVICE_HEADERS, json=NODE)
            assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
            r = await c.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                             json=llm_config_body())
            assert r.status_code == 503 and r.json()["error"]["code"] == "database_unavailable"

            proxy.restore()

            async def db_ok() -> bool:
                return (await c.get("/healthz")).json()["db"] == "ok"

            async def console_login_works() -> bool:  # stored credentials bootstrapped late
                r = await c.post("/api/auth/login",
                                 json={"username": ADMIN_USER, "password": ADMIN_PASSWORD})
                return r.status_code == 204

            await _eventually(db_ok, 10)
            await _eventually(console_login_works, 10)
            r = await c.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                             json=llm_config_body())
            assert r.status_code == 201, r.text
    finally:
        await proxy.stop()
