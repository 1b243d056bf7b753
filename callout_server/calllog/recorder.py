"""Background writer of call-log records.

`record()` is called on the hot path: it cleans the record (`CallRecord.clean()`), takes a
pre-reserved id, updates metrics and appends to a bounded deque — no I/O, no await. A
background task batches inserts. When the database is slow or down the deque fills and the
OLDEST records are dropped and counted, so requests are never delayed and memory stays
bounded: by `queue_size` records and by `queue_bytes`, the sum of each record's estimated
memory (`records.held_bytes`: an NLU record holds its parsed request, ~40 KB typically).

A batch the database refuses for its data (see refusals.py) is split in halves until the
refused records are alone; those are dropped and counted (`rejected`), the rest are written.
Any other failure keeps the batch and retries with back-off; a writer that has written
nothing for `stalled_after_s` while records wait reports itself `stalled` (`health()`).
Reserving ids is bounded by `write_timeout_s` as each insert is: a database gone silent fails.

An NLU decision's inputs ride on its last attempt's record (`CallRecord.inputs`) and are
written to `nlu_call_inputs` in the same transaction as the batch; they are kept for
`nlu_inputs_days` (0: never written), the records for `retention_days`; one purge loop
deletes both by time.

Customers' personal data is redacted from each record once, before its batch is written,
in a worker thread (redact.py): never on the request path.

Shutdown: `stop()` raises a flag the loop checks, wakes it, waits a bounded time for it to
finish the batch it holds, cancels it if it must, then writes what is left — never longer
than its timeout, whatever the database does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any, Literal

import orjson
from sqlalchemy import insert

from callout_server.calllog import metrics, usage_metrics
from callout_server.calllog.ids import IdAllocator
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.calllog.records import COLUMNS, INPUT_COLUMNS, CallRecord, held_bytes
from callout_server.calllog.redact import prepare
from callout_server.calllog.refusals import is_refused_data
from callout_server.calllog.usage_rollup import rollup, upsert, upsert_pg
from callout_server.db.base import SCHEMA, utcnow
from callout_server.db.engine import Database
from callout_server.db.retention import purge_before, purge_every
from callout_server.privacy import Privacy, current

log = logging.getLogger(__name__)

WriterState = Literal["ok", "catching_up", "stalled"]
# Per worker: ~1,600 NLU records of a typical 14 KB request, ~160 of a 100 KB one (records.py).
QUEUE_BYTES = 64 * 1024 * 1024


class DiagnosticsRecorder:
    def __init__(self, db: Database, *, queue_size: int = 10_000, batch_size: int = 200,
                 flush_interval_s: float = 0.5, retention_days: int = 30,
                 purge_interval_s: float = 3600.0, write_timeout_s: float = 10.0,
                 stalled_after_s: float = 30.0, nlu_inputs_days: int = 7,
                 privacy: Privacy | None = None, purge_batch: int = 5000,
                 queue_bytes: int = QUEUE_BYTES) -> None:
        self._db = db
        self._purge_batch = purge_batch
        self._privacy = privacy or current()
        self._queue: deque[CallRecord] = deque()
        self._queue_size = queue_size
        self._queue_bytes = queue_bytes
        self.queued_bytes = 0  # the queued records' `held`, summed
        self._batch_size = batch_size
        self._flush_interval_s = flush_interval_s
        self._retention = timedelta(days=retention_days)
        self._inputs_retention = timedelta(days=min(nlu_inputs_days, retention_days))
        self.keeps_nlu_inputs = nlu_inputs_days > 0
        self._purge_interval_s = purge_interval_s
        self._write_timeout_s = write_timeout_s
        self._stalled_after_s = stalled_after_s
        self._ids = IdAllocator(db, "llm_call_logs")
        self._copy = db.engine.dialect.driver == "asyncpg"
        self._wake = asyncio.Event()
        # One batch at a time, whoever writes it: flush() waits for the one the loop holds.
        self._writing = asyncio.Lock()
        self._in_flight: list[CallRecord] = []
        self._stopping = False
        self._stopped = asyncio.Event()  # ends a back-off early, as `_wake` does not
        self._writer: asyncio.Task[None] | None = None
        self._purger: asyncio.Task[None] | None = None
        # Monotonic time since which records have waited with no write succeeding (for
        # health): moved on by every write that succeeds and when the queue goes from empty
        # to not empty.
        self._waiting_since = time.monotonic()
        self.dropped = 0
        self.rejected = 0
        self.written = 0
        self.db_ok = True
        # Records were dropped, or a write failed, since the queue was last empty: the log is
        # behind (health says `catching_up` until a write empties the queue).
        self.behind = False

    @property
    def pending(self) -> int:
        """Records not yet written: queued, or in the batch being written now."""
        return len(self._queue) + len(self._in_flight)

    def health(self) -> dict[str, Any]:
        """The writer's state for /healthz, from what the loop keeps: no I/O."""
        oldest = self._in_flight[0] if self._in_flight else (
            self._queue[0] if self._queue else None)
        if oldest is None:
            return {"diagnostics_writer": "catching_up" if self.behind else "ok",
                    "diagnostics_oldest_pending_s": None}
        waited = time.monotonic() - self._waiting_since
        state: WriterState = "stalled" if waited > self._stalled_after_s else (
            "catching_up" if self.behind else "ok")
        age = max((utcnow() - oldest.at).total_seconds(), 0.0)
        return {"diagnostics_writer": state, "diagnostics_oldest_pending_s": round(age, 1)}

    def record(self, rec: CallRecord) -> int | None:
        """Queue one record; returns its id (None if no id block could be reserved yet)."""
        rec.clean()
        if rec.id is None:
            rec.id = self._ids.take()
        if rec.inputs is not None and not self.keeps_nlu_inputs:
            rec.inputs = None
        size = rec.held = held_bytes(rec)
        if rec.source == "live":
            metrics.observe(rec)
            usage_metrics.observe(rec)  # per service key and campaign
        elif rec.source == "evaluation":  # a replay is no traffic: the live series stay
            metrics.EVALUATION_CALLS.labels(rec.code).inc()  # what the dialers sent
        # "rule": the phrase rules answered, no model call (their own counters, tiers/nlu);
        # "playground": a console user's try-out, no traffic either
        if not self._queue and not self._in_flight:
            self._waiting_since = time.monotonic()  # nothing was waiting until now
        if len(self._queue) >= self._queue_size or \
                self.queued_bytes + size > self._queue_bytes:
            if not self._make_room(size):
                return rec.id  # dropped: one record past the whole bound
        self._queue.append(rec)
        self.queued_bytes += size
        metrics.DIAG_QUEUED.set(len(self._queue))
        if self._wanted():
            self._wake.set()
        return rec.id

    def _make_room(self, size: int) -> bool:
        """Drop the oldest records (counted) until one of `size` fits; False (that one is
        the record dropped) when it alone is past `queue_bytes`."""
        fits = size <= self._queue_bytes
        lost = 0 if fits else 1
        while fits and self._queue and (len(self._queue) >= self._queue_size
                                        or self.queued_bytes + size > self._queue_bytes):
            self.queued_bytes -= self._queue.popleft().held
            lost += 1
        self.dropped += lost
        self.behind = True
        metrics.DIAG_DROPPED.inc(lost)
        return fits

    def _wanted(self) -> bool:
        """A write is due before the interval ends: a full batch waits, or ids run low."""
        return len(self._queue) >= self._batch_size or self._ids.available < 100

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """No batch is written while inside (an erasure deletes rows meanwhile)."""
        async with self._writing:
            yield

    def forget(self, erased: Callable[[str | None], bool]) -> int:
        """Drop the queued records of the calls `erased` names (an erasure); how many."""
        keep = deque(rec for rec in self._queue if not erased(rec.call_id))
        dropped = len(self._queue) - len(keep)
        if dropped:
            self._queue = keep
            self.queued_bytes = sum(rec.held for rec in keep)
            metrics.DIAG_QUEUED.set(len(keep))
        return dropped

    async def start(self) -> None:
        with contextlib.suppress(Exception):  # DB down at start: the writer retries
            await self._refill()
        self._stopping = False
        self._stopped.clear()
        self._writer = asyncio.create_task(self._write_loop(), name="calllog-writer")
        self._purger = asyncio.create_task(purge_every(
            self._purge_interval_s, self.purge_expired, logger=log,
            purged="call log: purged %d records past retention",
            failed="call log purge failed: %s"), name="calllog-purge")

    async def stop(self, timeout_s: float = 3.0) -> None:
        """Stop the background tasks and write what is queued, within about `timeout_s`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        self._stopping = True
        self._stopped.set()
        self._wake.set()
        writer, purger, self._writer, self._purger = self._writer, self._purger, None, None
        if purger is not None:
            purger.cancel()
            await asyncio.wait([purger], timeout=1.0)
        if writer is not None:
            # The flag ends the loop once it is done with the batch it holds (a write is
            # itself bounded by write_timeout_s); past the deadline it is cancelled.
            await asyncio.wait([writer], timeout=max(deadline - loop.time(), 0.0))
            if not writer.done():
                writer.cancel()
                await asyncio.wait([writer], timeout=1.0)
            if not writer.done():
                log.error("call log writer did not stop; leaving it behind")
            elif not writer.cancelled() and writer.exception() is not None:
                log.error("call log writer failed: %r", writer.exception())
        if self._queue:
            try:  # best effort: the DB may be gone at shutdown
                async with asyncio.timeout(max(deadline - loop.time(), 0.5)):
                    await self.flush()
            except Exception as exc:
                log.warning("call log: %d records not written at shutdown (%s)",
                            self.pending, type(exc).__name__)

    async def flush(self) -> None:
        """Write everything queued now, after the batch the loop may hold (tests, shutdown).

        Refused records are dropped as the loop drops them; a database that cannot be
        reached raises, with the records kept.
        """
        while True:
            async with self._writing:
                if not self._queue:
                    return
                await self._write_batch()

    async def _write_loop(self) -> None:
        backoff = self._flush_interval_s
        while not self._stopping:
            await self._sleep(self._wake, self._flush_interval_s)
            try:
                await self._refill()
                # What waits now, then only full batches: records that come while a batch is
                # written wait for the next wake. Draining until the queue is empty wrote a
                # batch of the few records each write let in, back to back (4-5 records a
                # COPY at 1 decision in flight: the writer cost more than the decisions).
                more = True
                while more and self._queue and not self._stopping:
                    async with self._writing:
                        if self._queue:
                            await self._write_batch()
                    more = len(self._queue) >= self._batch_size
                if not self._wanted():
                    self._wake.clear()  # set meanwhile by a batch now written
                self.db_ok = True
                backoff = self._flush_interval_s
            except Exception as exc:
                if self.db_ok:
                    log.warning("call log writer: cannot write (%s); retrying",
                                type(exc).__name__)
                self.db_ok = False
                self.behind = self.behind or bool(self._queue)
                # Not woken by new records: during an outage every record would retry.
                await self._sleep(self._stopped, backoff)
                backoff = min(backoff * 2, 10.0)

    async def _sleep(self, event: asyncio.Event, seconds: float) -> None:
        """Until `event` is set or `seconds` pass; a cancellation propagates."""
        if self._stopping:
            return
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can turn a cancellation that
            # coincides with its timeout into TimeoutError, which would then be swallowed.
            async with asyncio.timeout(seconds):
                await event.wait()
        except TimeoutError:
            pass
        self._wake.clear()

    async def _write_batch(self) -> None:
        """Write the oldest batch; the caller holds `_writing`."""
        n = min(self._batch_size, len(self._queue))
        batch = self._in_flight = [self._queue.popleft() for _ in range(n)]
        self.queued_bytes -= sum(rec.held for rec in batch)
        # Halves still to write, next at the end: a refused batch is split until the
        # records the database refuses are alone.
        todo = [batch]
        try:
            for rec in batch:
                if rec.id is None:
                    await self._refill(low_water=1)
                    rec.id = self._ids.take()
            await prepare(batch, self._privacy)  # redacted once, in a thread (redact.py)
            while todo:
                part = todo[-1]  # popped once settled: a cancellation puts it back too
                try:
                    await self._insert_bounded(part)
                except Exception as exc:
                    if not is_refused_data(exc):
                        raise
                    todo.pop()
                    if len(part) == 1:
                        self._reject(part[0], exc)
                    else:
                        half = len(part) // 2
                        todo += [part[half:], part[:half]]
                else:
                    todo.pop()
                    self.written += len(part)
                    self._waiting_since = time.monotonic()
                if todo:  # splitting: `pending` counts only what is still to write
                    self._in_flight = [rec for rest in reversed(todo) for rec in rest]
        except BaseException:
            self._put_back([rec for part in reversed(todo) for rec in part])
            raise
        else:
            if not self._queue:  # caught up
                self.behind = False
        finally:
            self._in_flight = []
            metrics.DIAG_QUEUED.set(len(self._queue))

    async def _refill(self, low_water: int | None = None) -> None:
        # Bounded as the insert is: the engine sets no command timeout, so a database gone
        # silent would hold the writer here until TCP gives up (~15 min), db_ok still true.
        async with asyncio.timeout(self._write_timeout_s):
            await self._ids.refill(low_water)

    async def _insert_bounded(self, batch: list[CallRecord]) -> None:
        # Bounded: a half-open connection (packets dropped, no reset) would otherwise stall
        # the writer until TCP keepalive gives up, while the queue fills and drops.
        async with asyncio.timeout(self._write_timeout_s):
            await self._insert(batch)

    def _reject(self, rec: CallRecord, exc: BaseException) -> None:
        self.rejected += 1
        metrics.DIAG_REJECTED.inc()
        self._waiting_since = time.monotonic()  # progress: the writer is not stuck on it
        # The record's fields are call data: name it by id only, the reason by its class.
        log.warning("call log: record %s (tier %s, code %s) refused by the database (%s); "
                    "dropped", rec.id, rec.tier, rec.code, type(exc).__name__)

    def _put_back(self, records: list[CallRecord]) -> None:
        """Back in front of the queue, keeping both bounds: the oldest beyond them are dropped."""
        room, space = self._queue_size - len(self._queue), self._queue_bytes - self.queued_bytes
        start = len(records)
        while start > 0 and room > 0 and records[start - 1].held <= space:
            start, room, space = start - 1, room - 1, space - records[start - 1].held
        keep = records[start:]
        self.behind = True  # a batch put back: a write failed with records waiting
        if start:
            self.dropped += start
            metrics.DIAG_DROPPED.inc(start)
        self.queued_bytes += sum(rec.held for rec in keep)
        self._queue.extendleft(reversed(keep))

    async def _insert(self, batch: list[CallRecord]) -> None:
        usage = rollup(batch)  # the daily summary, added to with the records (usage_rollup.py)
        if self._copy:
            # PostgreSQL: COPY through asyncpg costs a few µs a record, where SQLAlchemy's
            # multi-row INSERT (bind processing per value) cost ~30 µs of the worker's CPU.
            # The rows are tuples in column order, built before a connection is taken.
            records = [rec.values() for rec in batch]
            inputs = [row for rec in batch if (row := rec.input_tuple()) is not None]
            async with self._db.engine.connect() as conn:
                raw = await conn.get_raw_connection()
                driver = raw.driver_connection
                assert driver is not None
                async with driver.transaction():  # records and inputs: both or neither
                    await driver.copy_records_to_table(
                        LLMCallLog.__tablename__, schema_name=SCHEMA, columns=COLUMNS,
                        records=records)
                    if inputs:
                        await driver.copy_records_to_table(
                            NluCallInput.__tablename__, schema_name=SCHEMA,
                            columns=INPUT_COLUMNS, records=inputs)
                    await upsert_pg(driver, usage)
            return
        inputs = [row for rec in batch if (row := rec.input_row()) is not None]
        async with self._db.session() as s:
            await s.execute(insert(LLMCallLog), [rec.row() for rec in batch])
            if inputs:
                await s.execute(insert(NluCallInput), [
                    row | {name: orjson.loads(row[name]) if row[name] is not None else None
                           for name in ("inputs", "decision", "redacted")} for row in inputs])
            await upsert(s, usage)

    async def purge_expired(self) -> int:
        """Delete records past `retention_days` and NLU inputs past `nlu_inputs_days`, in
        batches of `purge_batch` rows."""
        now = utcnow()
        records = await purge_before(self._db, LLMCallLog, now - self._retention,
                                     batch=self._purge_batch)
        inputs = await purge_before(self._db, NluCallInput, now - self._inputs_retention,
                                    batch=self._purge_batch)
        return records + inputs

