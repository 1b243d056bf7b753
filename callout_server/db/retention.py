"""The background loop behind every table kept for a bounded time (call log, NLU inputs,
evaluation rows, audit trail), and the bounded delete each purge runs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select

from callout_server.db.engine import Database


async def purge_every(interval_s: float, purge: Callable[[], Awaitable[int]], *,
                      logger: logging.Logger, purged: str, failed: str) -> None:
    """Run `purge` every `interval_s` seconds until cancelled.

    Sleeps first: a worker restart is no reason to hit the table at once. A failed purge
    (the database may be down) is logged with `failed` and tried again next interval;
    `purged` (with one %d) is logged when rows went.
    """
    while True:
        await asyncio.sleep(interval_s)
        try:
            count = await purge()
            if count:
                logger.info(purged, count)
        except Exception as exc:
            logger.warning(failed, type(exc).__name__)


async def purge_before(db: Database, table: Any, cutoff: datetime, *, batch: int = 5000) -> int:
    """Delete the rows of `table` (a model with `id` and `at`) older than `cutoff`, `batch`
    rows per statement and transaction, oldest first: a long backlog never holds a long lock
    or one huge transaction. Returns how many went."""
    total = 0
    while True:
        oldest = select(table.id).where(table.at < cutoff).order_by(table.id).limit(batch)
        async with db.session() as s:
            result = await s.execute(delete(table).where(table.id.in_(oldest)))
        count = int(result.rowcount or 0)
        total += count
        if count < batch:
            return total
