"""The NLU hot path does no database work, and survives the database going away.

Zero queries: statements are counted on the worker's engine with `before_cursor_execute`
and attributed to the asyncio task that issued them. The in-process transport runs each
request on the test's own task, so "no statement on this task while serving" is exactly
"no query on the request path"; the call-log writer's inserts run on its own task. A probe
request that does query shows the attribution works.
"""

from __future__ import annotations

import asyncio
import statistics
from urllib.parse import urlsplit, urlunsplit

import httpx
from sqlalchemy import event

from tests.fixtures.calllog import wait_until
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body, reset_tables
from tests.fixtures.tcp_proxy import TcpProxy
from tests.support.nlu import answer, decide, nlu_app


class TaskQueryCounter:
    """Statements executed on an engine, keyed by the name of the asyncio task issuing them."""

    def __init__(self, engine) -> None:
        self.engine = engine.sync_engine
        self.by_task: dict[str, list[str]] = {}

    def _on(self, conn, cursor, statement, parameters, context, executemany) -> None:
        task = asyncio.current_task()
        self.by_task.setdefault(task.get_name() if task else "<none>", []).append(statement)

    def __enter__(self) -> TaskQueryCounter:
        event.listen(self.engine, "before_cursor_execute", self._on)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._on)


async def test_zero_queries_on_the_request_path(make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", time="明天")})
    async with nlu_app(make_settings, pg_url, emulator, "unused",
                       **{"diagnostics.flush_interval_s": 0.05}) as client:
        services = client.services  # type: ignore[attr-defined]
        # A database-backed active configuration, as in production (not the file default).
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            model=model, base_url=emulator.base_url("vllm"), is_active=True))
        assert r.status_code == 201, r.text
        assert services.store.current.config_for("nlu").model == model
        me = asyncio.current_task().get_name()  # type: ignore[union-attr]

        with TaskQueryCounter(services.db.engine) as probe:  # attribution works
            await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS)
        assert probe.by_task.get(me)

        with TaskQueryCounter(services.db.engine) as counter:
            for i in range(25):
                r, _ = await decide(client, call_id=f"zq-{i}")
                assert r.status_code == 200 and r.json()["intent"] == "agree"
                r, _ = await decide(client, call_id=f"zq-f{i}", overrides={"top_k": 1})
                assert r.status_code == 422  # the error path too
            # Let the writer do its inserts while we count.
            await wait_until(lambda: services.recorder.written == 25)
        assert counter.by_task.get(me, []) == []
        # Meanwhile the 25 records did reach the database, from the writer's own task (on
        # PostgreSQL by COPY on the raw asyncpg connection, which this event never sees).
        assert services.recorder.written == 25 and services.recorder.pending == 0


def _proxied(url: str, port: int) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))


async def _latencies(client: httpx.AsyncClient, n: int, tag: str) -> list[float]:
    out = []
    for i in range(n):
        r, elapsed = await decide(client, call_id=f"{tag}-{i}")
        assert r.status_code == 200 and r.json()["fallback"] is False, r.text
        out.append(elapsed)
    return out


# How long a connection to the cut database hangs before it fails.
CONNECT_TIMEOUT_S = 2.0


async def test_database_outage_never_slows_decisions(make_settings, pg_url, emulator) -> None:
    pg = urlsplit(pg_url)
    proxy = TcpProxy(pg.hostname or "127.0.0.1", pg.port or 5432)
    await proxy.start()
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", time="明天")})
    await reset_tables(pg_url)
    try:
        async with nlu_app(make_settings, pg_url, emulator, model, **{
                "database.url": _proxied(pg_url, proxy.port),
                "database.connect_timeout_s": CONNECT_TIMEOUT_S,
                "diagnostics.queue_size": 40, "diagnostics.batch_size": 10,
                "diagnostics.flush_interval_s": 0.05}) as client:
            services = client.services  # type: ignore[attr-defined]
            before = await _latencies(client, 30, "up")
            await services.recorder.flush()
            assert services.recorder.written == 30

            proxy.cut()
            during = await _latencies(client, 100, "down")
            health = (await client.get("/healthz")).json()
            metrics = (await client.get("/metrics")).text
            # Requests never waited on the database: one that did would wait for the
            # blackholed connect (CONNECT_TIMEOUT_S) at least. The bounds are loose on
            # purpose: a loaded machine (both cores busy) stretches any single request.
            assert max(during) < CONNECT_TIMEOUT_S / 2, max(during)
            assert statistics.median(during) < 2 * statistics.median(before) + 0.05
            # The bounded queue kept the newest 40 (plus at most one batch of 10 held by the
            # writer's failing insert, which `pending` counts) and counted what it dropped.
            assert services.recorder.pending <= 50
            assert services.recorder.dropped >= 50
            assert health["diagnostics_dropped"] >= 50 and health["diagnostics_pending"] > 0
            assert "callout_diagnostics_dropped_total" in metrics

            proxy.restore()
            # The writer's back-off (up to 10 s) has no event to wait on: polled.
            await wait_until(lambda: services.recorder.pending == 0, timeout_s=30)
            dropped = services.recorder.dropped
            r = await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                                 params={"limit": 500})
            call_ids = {x["call_id"] for x in r.json()["items"]}
            # Every record of the outage that was not dropped is now in the table: the newest.
            assert {f"down-{i}" for i in range(dropped, 100)} <= call_ids
            assert {f"up-{i}" for i in range(30)} <= call_ids
            assert len(call_ids) == 30 + 100 - dropped
    finally:
        await proxy.stop()
