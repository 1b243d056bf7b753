"""The call-log writer through a database outage, on the real PostgreSQL behind a proxy.

The queue is bounded by the memory its records hold, not only by their count: an NLU record
holds its parsed request, and 10,000 of them held 400 MiB (~1.2 GiB for 3,000 of 100 KB).
Reserving ids is bounded as an insert is: a database that stops answering without a reset
(failover, a network drop) must fail the writer's step within `write_timeout_s`, not hang it
until TCP gives up (~15 min) while `db_ok` stays true.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord, held_bytes
from callout_server.db.engine import Database
from callout_server.tiers.nlu.schemas import DecideRequest
from tests.fixtures.calllog import wait_until
from tests.fixtures.database import asyncpg_dsn, reset_tables
from tests.fixtures.tcp_proxy import SilentProxy

pytestmark = pytest.mark.timeout(90)

WRITE_TIMEOUT_S = 1.0


@pytest_asyncio.fixture
async def proxy(pg_url: str) -> AsyncIterator[SilentProxy]:
    await reset_tables(pg_url)
    server = SilentProxy()
    await server.start()
    yield server
    server.flow()
    await server.stop()


async def _stored(pg_url: str, table: str = "llm_call_logs") -> list[str]:
    """The call ids written to `table`, read straight from PostgreSQL (not through the proxy)."""
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        rows = await conn.fetch(f"SELECT call_id FROM callout.{table} ORDER BY call_id")
    finally:
        await conn.close()
    return [r["call_id"] for r in rows]


def _nlu_record(call_id: str, intents: int, description: str) -> CallRecord:
    """An NLU decision's record with its inputs, as the tier hands it over."""
    request = DecideRequest.model_validate({
        "call_id": call_id, "node_id": "n1", "utterance": "是的我想了解一下",
        "intents": [{"name": f"intent_{k}", "description": description}
                    for k in range(intents)],
        "context": [{"role": "assistant", "content": "您好，这里是客服中心"}]})
    rec = CallRecord(tier="nlu", code="ok", call_id=call_id, node_id="n1", latency_ms=120.0)
    rec.inputs = NluInputs(request, {"intent": "intent_0", "slots": {}, "fallback": False,
                                     "code": "ok", "confidence": 0.9}, 120.0)
    return rec


def _big(call_id: str) -> CallRecord:
    return _nlu_record(call_id, 40, "说明" * 250)  # ~20,000 characters of intents


def _small(call_id: str) -> CallRecord:
    return _nlu_record(call_id, 1, "同意")


async def test_queue_is_bounded_by_bytes_and_drains_when_the_database_returns(
        pg_url: str, proxy: SilentProxy) -> None:
    big, small = held_bytes(_big("size")), held_bytes(_small("size"))
    assert big > 20 * small  # the estimate sees the request's size
    bound = 5 * big + big // 2  # room for five big records and then some small ones
    proxy.cut(refuse=True)  # down from the start: nothing is written, everything queues
    db = Database(proxy.url_for(pg_url), connect_timeout_s=2.0)
    recorder = DiagnosticsRecorder(db, flush_interval_s=0.05, queue_bytes=bound,
                                   write_timeout_s=WRITE_TIMEOUT_S)
    await recorder.start()
    try:
        for i in range(12):
            recorder.record(_big(f"big-{i:02d}"))
        # The count bound (10,000) would have kept all twelve; the oldest seven went.
        assert recorder.pending == 5 and recorder.dropped == 7
        assert recorder.queued_bytes == 5 * big <= bound
        for i in range(3):
            recorder.record(_small(f"small-{i}"))
        assert recorder.pending == 8 and recorder.dropped == 7  # under the bound: kept
        assert recorder.queued_bytes == 5 * big + 3 * small <= bound
        recorder.record(_big("big-12"))  # no room: the oldest go to make it
        assert recorder.pending == 8 and recorder.dropped == 8
        assert recorder.queued_bytes <= bound
        await wait_until(lambda: not recorder.db_ok)
        assert recorder.written == 0 and recorder.pending == 8
        assert recorder.health()["diagnostics_writer"] != "ok"

        proxy.restore()
        await wait_until(lambda: recorder.pending == 0 and recorder.db_ok, timeout_s=40)
        assert recorder.written == 8 and recorder.queued_bytes == 0
        assert recorder.health()["diagnostics_writer"] == "ok"
    finally:
        await recorder.stop()
        await db.dispose()
    kept = [f"big-{i:02d}" for i in range(8, 13)] + [f"small-{i}" for i in range(3)]
    assert await _stored(pg_url) == sorted(kept)
    assert await _stored(pg_url, "nlu_call_inputs") == sorted(kept)


async def test_a_record_alone_past_the_bound_is_dropped_not_the_queue(
        pg_url: str, proxy: SilentProxy) -> None:
    proxy.cut(refuse=True)
    db = Database(proxy.url_for(pg_url), connect_timeout_s=2.0)
    recorder = DiagnosticsRecorder(db, queue_bytes=held_bytes(_big("size")) - 1)
    try:
        for i in range(3):
            recorder.record(_small(f"small-{i}"))
        recorder.record(_big("big"))
        assert recorder.pending == 3 and recorder.dropped == 1
        proxy.restore()
        await recorder.flush()
    finally:
        await db.dispose()
    assert await _stored(pg_url) == ["small-0", "small-1", "small-2"]


async def test_a_silent_database_fails_the_id_refill_within_the_write_timeout(
        pg_url: str, proxy: SilentProxy, caplog: pytest.LogCaptureFixture) -> None:
    db = Database(proxy.url_for(pg_url), connect_timeout_s=2.0)
    recorder = DiagnosticsRecorder(db, flush_interval_s=0.05, write_timeout_s=WRITE_TIMEOUT_S,
                                   stalled_after_s=1.0)
    await recorder.start()
    try:
        recorder.record(_small("before"))
        await recorder.flush()  # a pooled connection now, through the proxy
        assert recorder.written == 1
        while recorder._ids.available >= 500:  # ids used up by earlier traffic: the loop's
            recorder._ids.take()  # next wake reserves a block, as it would any time
        caplog.set_level(logging.WARNING, logger="callout_server.calllog.recorder")
        proxy.freeze()  # the database goes silent: no answer, no reset
        started = time.monotonic()
        for i in range(5):
            recorder.record(_small(f"silent-{i}"))
        await wait_until(lambda: not recorder.db_ok, timeout_s=WRITE_TIMEOUT_S + 15)
        assert time.monotonic() - started < WRITE_TIMEOUT_S + 5  # not TCP's ~15 minutes
        warnings = [r for r in caplog.records if "cannot write" in r.getMessage()]
        assert len(warnings) == 1 and "TimeoutError" in warnings[0].getMessage()
        assert recorder.pending == 5 and recorder.dropped == 0  # kept, as any failure keeps
        await wait_until(lambda: recorder.health()["diagnostics_writer"] == "stalled")

        proxy.flow()  # the database answers again
        await wait_until(lambda: recorder.pending == 0 and recorder.db_ok, timeout_s=40)
        assert recorder.written == 6 and recorder.dropped == 0
        assert recorder.health()["diagnostics_writer"] == "ok"
        # Warned once for the outage, however many retries it took.
        assert len([r for r in caplog.records if "cannot write" in r.getMessage()]) == 1
    finally:
        proxy.flow()
        await recorder.stop()
        await db.dispose()
    assert await _stored(pg_url) == ["before", *(f"silent-{i}" for i in range(5))]
