"""When each service key was last used: noted in memory per request, written in batches.

    last_used.touch(key_id)        # the request path: one dict assignment, no I/O
    await last_used.start() / stop()

Every `flush_interval_s` the background task writes what it has noted since its last write
in one statement per batch (`last_used_at` only ever moves forward, so workers writing the
same key in any order agree). A database that is down loses no request: the times wait in
memory (one per key) and go with the next write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime

from sqlalchemy import bindparam, or_, update

from callout_server.db.engine import Database
from callout_server.service_keys.models import ServiceKeyRow

log = logging.getLogger(__name__)


class LastUsed:
    def __init__(self, db: Database, *, flush_interval_s: float = 5.0) -> None:
        self._db = db
        self._interval = flush_interval_s
        self._pending: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None

    def touch(self, key_id: int) -> None:
        self._pending[key_id] = time.time()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="service-keys-last-used")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 5)
            self._task = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), 5)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.flush()
            except Exception as exc:  # kept for the next round
                log.warning("service keys: last-used times not written (%s)", type(exc).__name__)

    async def flush(self) -> int:
        batch, self._pending = self._pending, {}
        if not batch:
            return 0
        rows = [{"key": k, "at": datetime.fromtimestamp(t, UTC)} for k, t in batch.items()]
        table = ServiceKeyRow.__table__
        statement = update(table).where(
            table.c.id == bindparam("key"),
            or_(table.c.last_used_at.is_(None), table.c.last_used_at < bindparam("at")),
        ).values(last_used_at=bindparam("at"))
        try:
            async with self._db.session() as session:
                await session.execute(statement, rows)
        except BaseException:
            for key, at in batch.items():  # back in, unless a newer time came meanwhile
                self._pending[key] = max(at, self._pending.get(key, 0.0))
            raise
        return len(rows)
