"""The background loop behind every table kept for a bounded time (call log, audit trail)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable


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
