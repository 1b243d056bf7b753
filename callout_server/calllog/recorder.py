"""Background writer of call-log records.

`record()` is called on the hot path: it takes a pre-reserved id, updates metrics and
appends to a bounded deque — no I/O, no await. A background task batches inserts. When the
database is slow or down the deque fills and the OLDEST records are dropped and counted,
so requests are never delayed and memory stays bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from datetime import timedelta

from sqlalchemy import delete, insert

from callout_server.calllog import metrics
from callout_server.calllog.ids import IdAllocator
from callout_server.calllog.models import LLMCallLog
from callout_server.calllog.records import COLUMNS, CallRecord
from callout_server.db.base import SCHEMA, utcnow
from callout_server.db.engine import Database

log = logging.getLogger(__name__)


class DiagnosticsRecorder:
    def __init__(self, db: Database, *, queue_size: int = 10_000, batch_size: int = 200,
                 flush_interval_s: float = 0.5, retention_days: int = 30,
                 purge_interval_s: float = 3600.0, write_timeout_s: float = 10.0) -> None:
        self._db = db
        self._queue: deque[CallRecord] = deque()
        self._queue_size = queue_size
        self._batch_size = batch_size
        self._flush_interval_s = flush_interval_s
        self._retention = timedelta(days=retention_days)
        self._purge_interval_s = purge_interval_s
        self._write_timeout_s = write_timeout_s
        self._ids = IdAllocator(db, "llm_call_logs")
        self._copy = db.engine.dialect.driver == "asyncpg"
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.dropped = 0
        self.written = 0
        self.db_ok = True

    @property
    def pending(self) -> int:
        return len(self._queue)

    def record(self, rec: CallRecord) -> int | None:
        """Queue one record; returns its id (None if no id block could be reserved yet)."""
        if rec.id is None:
            rec.id = self._ids.take()
        metrics.observe(rec)
        if len(self._queue) >= self._queue_size:
            self._queue.popleft()
            self.dropped += 1
            metrics.DIAG_DROPPED.inc()
        self._queue.append(rec)
        metrics.DIAG_QUEUED.set(len(self._queue))
        if len(self._queue) >= self._batch_size or self._ids.available < 100:
            self._wake.set()
        return rec.id

    async def start(self) -> None:
        with contextlib.suppress(Exception):  # DB down at start: the writer retries
            await self._ids.refill()
        self._tasks = [asyncio.create_task(self._write_loop(), name="calllog-writer"),
                       asyncio.create_task(self._purge_loop(), name="calllog-purge")]

    async def stop(self, timeout_s: float = 3.0) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        with contextlib.suppress(Exception):  # best effort: the DB may be gone at shutdown
            await asyncio.wait_for(self.flush(), timeout_s)

    async def flush(self) -> None:
        """Write everything queued now (tests and shutdown)."""
        while self._queue:
            await self._write_batch()

    async def _write_loop(self) -> None:
        backoff = self._flush_interval_s
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._flush_interval_s)
            self._wake.clear()
            try:
                await self._ids.refill()
                while self._queue:
                    await self._write_batch()
                self.db_ok = True
                backoff = self._flush_interval_s
            except Exception as exc:
                if self.db_ok:
                    log.warning("call log writer: database unavailable (%s); retrying",
                                type(exc).__name__)
                self.db_ok = False
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)

    async def _write_batch(self) -> None:
        batch = [self._queue.popleft() for _ in range(min(self._batch_size, len(self._queue)))]
        try:
            for rec in batch:
                if rec.id is None:
                    await self._ids.refill(low_water=1)
                    rec.id = self._ids.take()
            # Bounded: a half-open connection (packets dropped, no reset) would otherwise stall
            # the writer until TCP keepalive gives up, while the queue fills and drops.
            async with asyncio.timeout(self._write_timeout_s):
                await self._insert(batch)
        except BaseException:
            # Put the batch back in front, keeping the bound: oldest beyond it are dropped.
            room = self._queue_size - len(self._queue)
            keep = batch[-room:] if room > 0 else []
            lost = len(batch) - len(keep)
            if lost:
                self.dropped += lost
                metrics.DIAG_DROPPED.inc(lost)
            self._queue.extendleft(reversed(keep))
            raise
        self.written += len(batch)
        metrics.DIAG_QUEUED.set(len(self._queue))

    async def _insert(self, batch: list[CallRecord]) -> None:
        if self._copy:
            # PostgreSQL: COPY through asyncpg costs a few µs a record, where SQLAlchemy's
            # multi-row INSERT (bind processing per value) cost ~30 µs of the worker's CPU.
            async with self._db.engine.connect() as conn:
                raw = await conn.get_raw_connection()
                await raw.driver_connection.copy_records_to_table(  # type: ignore[union-attr]
                    LLMCallLog.__tablename__, schema_name=SCHEMA, columns=COLUMNS,
                    records=[rec.values() for rec in batch])
            return
        async with self._db.session() as s:
            await s.execute(insert(LLMCallLog), [rec.row() for rec in batch])

    async def purge_expired(self) -> int:
        cutoff = utcnow() - self._retention
        async with self._db.session() as s:
            result = await s.execute(delete(LLMCallLog).where(LLMCallLog.at < cutoff))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def _purge_loop(self) -> None:
        while True:
            # Sleep first: a worker restart is no reason to hit the table at once.
            await asyncio.sleep(self._purge_interval_s)
            try:
                purged = await self.purge_expired()
                if purged:
                    log.info("call log: purged %d records past retention", purged)
            except Exception as exc:
                log.warning("call log purge failed: %s", type(exc).__name__)
