"""The call log: ids known up front, batched background writes, bounded when the DB is down."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from callout_server.calllog import repository
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord
from callout_server.calllog.wording import worded
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.llm.diagnostics import Diagnostic


async def test_records_get_ids_before_they_are_written_and_land_in_batches(db: Database) -> None:
    recorder = DiagnosticsRecorder(db, batch_size=50, flush_interval_s=0.05)
    await recorder.start()
    try:
        diag = Diagnostic.make("truncated_by_reasoning", max_tokens=300, reasoning_tokens=300,
                               finish_reason="length")
        ids = [recorder.record(CallRecord.from_diagnostic("nlu", diag, call_id=f"c{i}",
                                                          latency_ms=10.0 + i))
               for i in range(120)]
        assert None not in ids and len(set(ids)) == 120
        await recorder.flush()
        async with db.session() as s:
            rows = await repository.list_records(s, limit=500, code="truncated_by_reasoning")
        assert sorted(r.id for r in rows) == sorted(ids)  # type: ignore[type-var]
        row = next(r for r in rows if r.call_id == "c7")
        assert (row.max_tokens, row.reasoning_tokens, row.finish_reason) == (300, 300, "length")
        # Stored as code + numbers, worded when read
        assert row.message is None and row.advice is None
        message, advice = worded(row, "en")
        assert "max_tokens limit (300)" in (message or "") and advice
    finally:
        await recorder.stop()


async def test_keyset_pages_are_newest_first_and_filtered(db: Database) -> None:
    recorder = DiagnosticsRecorder(db)
    await recorder.start()
    for i in range(7):
        recorder.record(CallRecord(tier="nlu" if i % 2 else "chat", code="ok", call_id=f"k{i}"))
    await recorder.stop()
    async with db.session() as s:
        first = await repository.list_records(s, limit=2, tier="nlu")
        rest = await repository.list_records(s, limit=10, tier="nlu", before_id=first[-1].id)
    ids = [r.id for r in first + rest]
    assert ids == sorted(ids, reverse=True) and len(ids) == 3
    assert {r.call_id for r in first + rest} == {"k1", "k3", "k5"}


async def test_database_down_never_delays_requests_and_drops_oldest(unused_tcp_port: int) -> None:
    dead = Database(f"postgresql+asyncpg://postgres@127.0.0.1:{unused_tcp_port}/nope")
    recorder = DiagnosticsRecorder(dead, queue_size=100, flush_interval_s=0.05)
    await recorder.start()
    try:
        started = time.perf_counter()
        for i in range(1000):
            recorder.record(CallRecord(tier="nlu", code="ok", call_id=str(i)))
        per_call_us = (time.perf_counter() - started) / 1000 * 1e6
        await asyncio.sleep(0.3)  # let the writer fail a few times
        assert per_call_us < 500  # no I/O on the caller's path
        assert recorder.pending == 100 and recorder.dropped == 900
        assert recorder.db_ok is False
    finally:
        await recorder.stop(timeout_s=0.5)
        await dead.dispose()


async def test_summary_counts_codes_and_latency_percentiles(db: Database) -> None:
    recorder = DiagnosticsRecorder(db)
    await recorder.start()
    for ms in range(1, 101):
        recorder.record(CallRecord(tier="nlu", code="ok", latency_ms=float(ms)))
    recorder.record(CallRecord(tier="nlu", code="timeout", latency_ms=1000.0))
    recorder.record(CallRecord(tier="chat", code="ok", latency_ms=5.0, ttft_ms=2.0))
    await recorder.stop()
    async with db.session() as s:
        tiers = await repository.summary(s, utcnow() - timedelta(hours=1))
    assert tiers["nlu"]["count"] == 101 and tiers["nlu"]["codes"] == {"ok": 100, "timeout": 1}
    assert 49 <= tiers["nlu"]["latency_ms"]["p50"] <= 52
    assert tiers["chat"]["ttft_ms"]["p50"] == 2.0


async def test_barge_ins_are_counted_apart_from_completed_turn_latency(db: Database) -> None:
    """A cancelled turn lasted as long as the customer let it: not a slow model."""
    recorder = DiagnosticsRecorder(db)
    await recorder.start()
    for ms in (400.0, 500.0, 600.0):
        recorder.record(CallRecord(tier="chat", code="ok", latency_ms=ms, ttft_ms=90.0))
    for ms in (4000.0, 9000.0):  # barge-ins, long into the reply
        recorder.record(CallRecord(tier="chat", code="cancelled", latency_ms=ms, ttft_ms=95.0))
    await recorder.stop()
    async with db.session() as s:
        chat = (await repository.summary(s, utcnow() - timedelta(hours=1)))["chat"]
    assert (chat["count"], chat["cancelled"]) == (5, 2)
    assert chat["completed_latency_ms"] == {"p50": 500.0, "p90": 580.0, "p99": 598.0}
    assert chat["latency_ms"]["p99"] > 8000  # every call's, as before
    assert chat["ttft_ms"]["p50"] == 90.0  # time to first token: of every turn


async def test_retention_purges_only_expired_records(db: Database) -> None:
    recorder = DiagnosticsRecorder(db, retention_days=7)
    await recorder.start()
    recorder.record(CallRecord(tier="nlu", code="ok", call_id="old", at=utcnow() - timedelta(days=8)))
    recorder.record(CallRecord(tier="nlu", code="ok", call_id="new"))
    await recorder.flush()
    assert await recorder.purge_expired() == 1
    await recorder.stop()
    async with db.session() as s:
        rows = await repository.list_records(s, limit=10)
    assert [r.call_id for r in rows] == ["new"]


async def test_a_hung_write_times_out_and_keeps_the_batch(db: Database) -> None:
    recorder = DiagnosticsRecorder(db, write_timeout_s=0.2)
    real_insert = recorder._insert
    hang = asyncio.Event()

    async def stalled_insert(batch: list[CallRecord]) -> None:  # a half-open connection
        await hang.wait()

    recorder._insert = stalled_insert  # type: ignore[method-assign]
    recorder.record(CallRecord(tier="nlu", code="ok", call_id="kept"))
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        await recorder.flush()
    assert time.perf_counter() - started < 2
    assert recorder.pending == 1 and recorder.dropped == 0  # back in the queue, not lost
    recorder._insert = real_insert  # type: ignore[method-assign]
    recorder._write_timeout_s = 30.0  # the database answers now, however busy the machine
    await recorder.flush()
    async with db.session() as s:
        rows = await repository.list_records(s, limit=10)
    assert [r.call_id for r in rows] == ["kept"]
