"""The serving path reads the in-memory snapshot only: zero database queries.

Queries are counted with SQLAlchemy's `before_cursor_execute` on the worker's own engine
while the snapshot is read many times and while requests are served. (The NLU and chat
routes add their own route-level checks on top of this one.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from sqlalchemy import event

from callout_server.config.model import TIERS
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body, reset_tables


@pytest_asyncio.fixture(loop_scope="session")
async def quiet_client(pg_url, make_settings) -> AsyncIterator[httpx.AsyncClient]:
    # A long poll interval: the background generation poll must not run during the count.
    await reset_tables(pg_url)
    async with running_app(make_settings(**{"redis.poll_interval_s": 3600})) as client:
        yield client


class QueryCounter:
    def __init__(self, engine) -> None:
        self.engine = engine.sync_engine
        self.statements: list[str] = []

    def _on(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self.statements.append(statement)

    def __enter__(self) -> QueryCounter:
        event.listen(self.engine, "before_cursor_execute", self._on)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._on)


async def test_zero_queries_while_serving(quiet_client) -> None:
    client = quiet_client
    services = client.services
    for tier in ("nlu", "chat"):
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                              json=llm_config_body(tier=tier, api_key="sk-abcdefghijklmnop",
                                                   is_active=True))
        assert r.status_code == 201
    with QueryCounter(services.db.engine) as probe:  # the counter itself works
        await client.get("/api/admin/llm-configs", headers=ADMIN_HEADERS)
    assert probe.statements

    with QueryCounter(services.db.engine) as counter:
        for _ in range(20_000):
            snap = services.store.current
            for tier in TIERS:
                cfg = snap.config_for(tier)
                assert cfg.api_key or tier == "script"
        for _ in range(50):
            assert (await client.get("/healthz")).status_code == 200
            r = await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)
            assert r.status_code == 200 and r.json()["tiers"]["nlu"]["source"] == "db"
    assert counter.statements == []
