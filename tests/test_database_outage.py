"""Every route that needs the database answers 503 `database_unavailable` while it is away.

PostgreSQL behind the TCP proxy (tests/fixtures/tcp_proxy.py; the shared server itself is
never stopped), in each way it can be away: refusing connections, gone silent, starting up
(every connection refused with 57P03), shutting down (open connections terminated with 57P01,
new ones refused). Each route is called once per state with the admin token (which needs no
database), and a console session's cookie on top; all answer the contract's envelope with
`Retry-After`, never a 500, and serve again when the database is back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from tests.fixtures.app import running_app
from tests.fixtures.database import (
    ADMIN_HEADERS,
    ADMIN_PASSWORD,
    ADMIN_USER,
    llm_config_body,
    reset_tables,
)
from tests.fixtures.tcp_proxy import SilentProxy, TcpProxy

CONFIGS = "/api/admin/llm-configs"
# (method, path, body): every route that reads or writes the database.
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", CONFIGS, None),
    ("POST", CONFIGS, llm_config_body(name="new-one")),
    ("GET", f"{CONFIGS}/1", None),
    ("PUT", f"{CONFIGS}/1", {"version": 1, "name": "renamed"}),
    ("DELETE", f"{CONFIGS}/1", None),
    ("POST", f"{CONFIGS}/1/activate", None),
    ("GET", f"{CONFIGS}/1/revisions", None),
    ("POST", f"{CONFIGS}/1/test", None),
    ("GET", "/api/admin/diagnostics", None),
    ("GET", "/api/admin/diagnostics/summary", None),
    ("GET", "/api/admin/scripts", None),
    ("GET", "/api/admin/scripts/1", None),
    ("PUT", "/api/admin/scripts/1", {"version": 1, "title": "t"}),
    ("DELETE", "/api/admin/scripts/1", None),
    ("GET", "/api/admin/users", None),
    ("POST", "/api/admin/users", {"username": "ops2", "password": "a-long-pass-123",
                                  "role": "viewer"}),
    ("PUT", "/api/admin/users/ops", {"role": "operator"}),
    ("DELETE", "/api/admin/users/ops", None),
    ("GET", "/api/admin/audit", None),
    ("POST", "/api/admin/evaluations", {"candidate_id": 1}),
    ("GET", "/api/admin/evaluations", None),
    ("GET", "/api/admin/evaluations/1", None),
    ("GET", "/api/admin/evaluations/1/disagreements", None),
    ("POST", "/api/admin/evaluations/1/cancel", None),
]


class Outage:
    def __init__(self, client: httpx.AsyncClient, proxy: TcpProxy) -> None:
        self.client, self.proxy = client, proxy

    async def call(self, method: str, path: str, body: dict[str, Any] | None,
                   headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.client.request(method, path, json=body,
                                         headers=headers or ADMIN_HEADERS)


@pytest_asyncio.fixture(loop_scope="session")
async def outage(pg_url, make_settings) -> AsyncIterator[Outage]:
    await reset_tables(pg_url)
    proxy = TcpProxy()
    await proxy.start()
    settings = make_settings(**{
        "database.url": proxy.url_for(pg_url), "database.connect_timeout_s": 0.5,
        "redis.poll_interval_s": 3600})
    try:
        async with running_app(settings) as client:
            r = await client.post(CONFIGS, headers=ADMIN_HEADERS, json=llm_config_body())
            assert r.status_code == 201, r.text
            r = await client.post("/api/admin/users", headers=ADMIN_HEADERS, json={
                "username": "ops", "password": "a-long-pass-123", "role": "viewer"})
            assert r.status_code == 201, r.text
            yield Outage(client, proxy)
    finally:
        await proxy.stop()


def _unavailable(r: httpx.Response, what: str) -> None:
    assert r.status_code == 503, (what, r.status_code, r.text)
    assert r.json()["error"]["code"] == "database_unavailable", (what, r.text)
    assert int(r.headers["retry-after"]) >= 1, what


@pytest.mark.parametrize("state", ["refused", "starting", "stopping"])
async def test_every_database_route_answers_503_while_the_database_is_away(
        outage: Outage, state: str) -> None:
    proxy = outage.proxy
    {"refused": lambda: proxy.cut(refuse=True), "starting": proxy.starting,
     "stopping": proxy.stopping}[state]()
    for method, path, body in ROUTES:
        _unavailable(await outage.call(method, path, body), f"{method} {path}")
    proxy.restore()
    r = await outage.call("GET", CONFIGS, None)
    assert r.status_code == 200, r.text  # serving again, no restart


async def test_a_silent_database_is_503_within_the_connect_timeout(outage: Outage) -> None:
    outage.proxy.cut()  # blackhole: connections are held open and never answered
    loop = asyncio.get_running_loop()
    for method, path, body in [("GET", "/api/admin/diagnostics", None),
                               ("GET", "/api/admin/scripts", None),
                               ("GET", "/api/admin/audit", None), ("GET", CONFIGS, None)]:
        started = loop.time()
        _unavailable(await outage.call(method, path, body), path)
        assert loop.time() - started < 15, path
    outage.proxy.restore()


async def test_a_console_session_meets_503_too(outage: Outage) -> None:
    r = await outage.client.post("/api/auth/login",
                                 json={"username": ADMIN_USER, "password": ADMIN_PASSWORD})
    assert r.status_code == 204, r.text
    session = {"Cookie": f"callout_session={r.cookies.get('callout_session')}"}
    outage.client.cookies.clear()
    outage.proxy.stopping()
    for method, path in [("GET", "/api/auth/me"), ("GET", "/api/admin/diagnostics"),
                         ("GET", "/api/admin/llm-active")]:
        _unavailable(await outage.call(method, path, None, session), path)
    outage.proxy.restore()


@pytest_asyncio.fixture(loop_scope="session")
async def silent(pg_url: str, make_settings: Any) -> AsyncIterator[Outage]:
    await reset_tables(pg_url)
    proxy = SilentProxy()
    await proxy.start()
    settings = make_settings(**{
        "database.url": proxy.url_for(pg_url), "database.connect_timeout_s": 0.5,
        "database.statement_timeout_s": 1.0, "redis.poll_interval_s": 3600})
    try:
        async with running_app(settings) as client:
            r = await client.get("/api/admin/audit", headers=ADMIN_HEADERS)
            assert r.status_code == 200, r.text  # the pool holds a live connection now
            yield Outage(client, proxy)
    finally:
        proxy.flow()
        await proxy.stop()


@pytest.mark.timeout(60)
async def test_a_database_gone_silent_mid_connection_is_503_within_the_statement_timeout(
        silent: Outage) -> None:
    """Connections already open stay open but nothing comes back (a failover, a network
    drop, no reset): without a statement timeout the pool's ping on checkout waited for
    TCP to give up (~15 min), and so did the request."""
    silent.proxy.freeze()
    loop = asyncio.get_running_loop()
    for path in ("/api/admin/audit", CONFIGS):
        started = loop.time()
        _unavailable(await silent.call("GET", path, None), path)
        assert loop.time() - started < 15, path
    silent.proxy.flow()
    r = await silent.call("GET", CONFIGS, None)
    assert r.status_code == 200, r.text
