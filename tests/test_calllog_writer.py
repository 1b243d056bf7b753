"""The call-log writer's lifecycle: bounded shutdown, flush after the batch in flight, stalls.

A writer that cannot stop hangs a worker's shutdown; a flush that returns while the loop still
holds a batch loses sight of records; a writer that cannot write must show in /healthz.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord
from callout_server.db.engine import Database
from tests.fixtures.calllog import stored, wait_until
from tests.fixtures.tcp_proxy import TcpProxy
from tests.support.nlu import answer, decide, nlu_app
from tests.test_nlu_outage import _proxied


def _record(call_id: str) -> CallRecord:
    return CallRecord(tier="nlu", code="ok", call_id=call_id)


async def test_flush_waits_for_the_batch_the_loop_holds(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.01)
    real_insert = recorder._insert
    entered, gate = asyncio.Event(), asyncio.Event()

    async def gated_insert(batch: list[CallRecord]) -> None:
        entered.set()
        await gate.wait()
        await real_insert(batch)

    recorder._insert = gated_insert  # type: ignore[method-assign]
    await recorder.start()
    try:
        for i in range(10):
            recorder.record(_record(f"f{i}"))
        await asyncio.wait_for(entered.wait(), 10)  # the loop popped the batch: queue empty
        assert recorder.pending == 10
        flushing = asyncio.create_task(recorder.flush())
        for _ in range(20):  # many turns of the event loop: a flush that saw an empty
            await asyncio.sleep(0)  # queue would be done by now
        assert not flushing.done()
        gate.set()
        await asyncio.wait_for(flushing, 10)
        assert recorder.written == 10 and recorder.pending == 0
    finally:
        gate.set()
        await recorder.stop()
    assert len(await stored(calllog_db)) == 10


async def test_stop_is_bounded_when_a_write_hangs_and_keeps_the_batch(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.01, write_timeout_s=120)
    entered = asyncio.Event()

    async def hung_insert(batch: list[CallRecord]) -> None:  # a half-open connection
        entered.set()
        await asyncio.Event().wait()

    recorder._insert = hung_insert  # type: ignore[method-assign]
    await recorder.start()
    recorder.record(_record("kept"))
    await asyncio.wait_for(entered.wait(), 10)
    started = time.monotonic()
    await recorder.stop(timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert recorder.pending == 1 and recorder.written == 0 and recorder.dropped == 0


async def test_stop_ends_a_writer_whose_cancellation_is_swallowed(calllog_db: Database) -> None:
    """A driver's wait_for (Python 3.11) can turn a cancellation into TimeoutError."""
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.01, write_timeout_s=120)
    entered = asyncio.Event()

    async def swallowing_insert(batch: list[CallRecord]) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise TimeoutError from None

    recorder._insert = swallowing_insert  # type: ignore[method-assign]
    await recorder.start()
    writer = recorder._writer
    recorder.record(_record("kept"))
    await asyncio.wait_for(entered.wait(), 10)
    started = time.monotonic()
    await recorder.stop(timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert writer is not None and writer.done()
    assert recorder.pending == 1


async def test_start_and_stop_many_times_never_hang(calllog_db: Database) -> None:
    """Stops landing at every point of the loop (waiting, writing, timing out)."""
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.001)
    for i in range(40):
        await recorder.start()
        recorder.record(_record(f"s{i}"))
        for _ in range(i % 7):
            await asyncio.sleep(0)
        await asyncio.wait_for(recorder.stop(timeout_s=2.0), 10)
    assert recorder.pending == 0 and recorder.written == 40


async def test_a_writer_that_cannot_write_reports_stalled_then_recovers(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.01, stalled_after_s=0.3)
    real_insert = recorder._insert
    broken = True

    async def refused_connection(batch: list[CallRecord]) -> None:
        if broken:
            raise ConnectionRefusedError("database down")
        await real_insert(batch)

    recorder._insert = refused_connection  # type: ignore[method-assign]
    await recorder.start()
    try:
        assert recorder.health() == {"diagnostics_writer": "ok",
                                     "diagnostics_oldest_pending_s": None}
        recorder.record(_record("waiting"))
        await wait_until(lambda: recorder.health()["diagnostics_writer"] == "stalled")
        assert recorder.health()["diagnostics_oldest_pending_s"] >= 0.3
        assert recorder.rejected == 0 and recorder.pending == 1  # kept, not refused
        broken = False
        await wait_until(lambda: recorder.pending == 0, timeout_s=30)  # back-off up to 10 s
        assert recorder.health()["diagnostics_writer"] == "ok"
    finally:
        await recorder.stop()
    assert [r.call_id for r in await stored(calllog_db)] == ["waiting"]


async def test_healthz_shows_a_stalled_writer_while_the_database_is_cut(
        make_settings, pg_url, emulator) -> None:
    pg = urlsplit(pg_url)
    proxy = TcpProxy(pg.hostname or "127.0.0.1", pg.port or 5432)
    await proxy.start()
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", time="明天")})
    try:
        async with nlu_app(make_settings, pg_url, emulator, model, **{
                "database.url": _proxied(pg_url, proxy.port), "database.connect_timeout_s": 1.0,
                "diagnostics.flush_interval_s": 0.05,
                "diagnostics.stalled_after_s": 1.0}) as client:
            recorder = client.services.recorder  # type: ignore[attr-defined]

            async def health() -> dict:
                return (await client.get("/healthz")).json()

            r, _ = await decide(client, call_id="before")
            assert r.status_code == 200
            await wait_until(lambda: recorder.written == 1)
            assert (await health())["diagnostics_writer"] == "ok"

            proxy.cut()
            r, _ = await decide(client, call_id="during")
            assert r.status_code == 200
            deadline = time.monotonic() + 20
            while (h := await health())["diagnostics_writer"] != "stalled":
                assert time.monotonic() < deadline, h
                await asyncio.sleep(0.05)
            assert h["status"] == "degraded" and h["diagnostics_pending"] == 1
            assert h["diagnostics_oldest_pending_s"] >= 1.0

            proxy.restore()
            deadline = time.monotonic() + 30
            while (h := await health())["diagnostics_writer"] != "ok" or h["diagnostics_pending"]:
                assert time.monotonic() < deadline, h
                await asyncio.sleep(0.05)
            assert h["status"] == "ok" and h["diagnostics_oldest_pending_s"] is None
            assert recorder.written == 2 and recorder.rejected == 0
    finally:
        await proxy.stop()


async def test_healthz_is_degraded_while_the_log_is_behind_after_an_outage(
        make_settings, pg_url, emulator) -> None:
    # The database is back (db "ok") but the writer has not written the records that waited
    # through the outage yet, and some were dropped: the log is not ok until it caught up.
    pg = urlsplit(pg_url)
    proxy = TcpProxy(pg.hostname or "127.0.0.1", pg.port or 5432)
    await proxy.start()
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", time="明天")})
    try:
        async with nlu_app(make_settings, pg_url, emulator, model, **{
                "database.url": _proxied(pg_url, proxy.port), "database.connect_timeout_s": 0.5,
                "redis.poll_interval_s": 0.2,
                # The writer wakes for a full batch only, never here: the test says when.
                "diagnostics.flush_interval_s": 3600, "diagnostics.batch_size": 500,
                "diagnostics.queue_size": 10}) as client:
            recorder = client.services.recorder  # type: ignore[attr-defined]

            async def health() -> dict:
                return (await client.get("/healthz")).json()

            proxy.cut(refuse=True)
            for i in range(15):
                r, _ = await decide(client, call_id=f"c{i}")
                assert r.status_code == 200
            await wait_until(lambda: client.services.sync.db_state == "down")  # type: ignore[attr-defined]
            proxy.restore()
            await wait_until(lambda: client.services.sync.db_state == "ok")  # type: ignore[attr-defined]
            h = await health()
            assert (h["db"], h["status"], h["diagnostics_writer"]) == ("ok", "degraded",
                                                                       "catching_up"), h
            assert (h["diagnostics_dropped"], h["diagnostics_pending"]) == (5, 10)
            await recorder.flush()  # the backlog written
            h = await health()
            assert (h["status"], h["diagnostics_writer"], h["diagnostics_pending"]) == (
                "ok", "ok", 0), h
            assert h["diagnostics_dropped"] == 5  # what was lost stays counted
    finally:
        await proxy.stop()


async def test_records_that_come_during_a_write_wait_for_the_next_batch(
        calllog_db: Database) -> None:
    """Under steady traffic the writer writes whole batches, then sleeps: it used to drain
    the queue back to back, one COPY for the few records each write let in (4-5 at one
    decision in flight), which cost the worker more than the decisions."""
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=60, batch_size=50)
    sizes: list[int] = []
    entered, gate = asyncio.Event(), asyncio.Event()
    naps: asyncio.Queue[int] = asyncio.Queue()  # batches written when the loop went to sleep
    real_insert, real_sleep = recorder._insert, recorder._sleep

    async def insert(batch: list[CallRecord]) -> None:
        sizes.append(len(batch))
        entered.set()
        await gate.wait()
        await real_insert(batch)

    async def sleep(event: asyncio.Event, seconds: float) -> None:
        naps.put_nowait(len(sizes))
        await real_sleep(event, seconds)

    recorder._insert = insert  # type: ignore[method-assign]
    recorder._sleep = sleep  # type: ignore[method-assign]
    await recorder.start()
    try:
        assert await asyncio.wait_for(naps.get(), 10) == 0
        for i in range(50):  # a full batch wakes the writer
            recorder.record(_record(f"a{i}"))
        await asyncio.wait_for(entered.wait(), 10)
        for i in range(120):  # meanwhile two full batches and 20 more come
            recorder.record(_record(f"b{i}"))
        gate.set()
        assert await asyncio.wait_for(naps.get(), 10) == 3
        assert sizes == [50, 50, 50] and recorder.pending == 20  # the 20 wait for a wake
    finally:
        gate.set()
        await recorder.stop()
    assert sizes == [50, 50, 50, 20] and len(await stored(calllog_db)) == 170
