"""The rollback watch: a background task on every worker.

Every `interval_s` (`[canary] check_interval_s`, 1 s) each worker reads the running
canaries from its snapshot (memory), and for each one reads both sides' figures from the
call log (every worker's records: two grouped queries over an index on (tier, variant,
at)); when the canary side is over a limit after `min_calls`, it ends the canary
(`CanaryService.rollback_if_crossed`), which re-checks inside the write under the
generation's row lock, so when several workers see it at once the first one ends it and
the others write nothing.

Why every worker rather than one holding a lease: nothing to elect or hand over when a
worker dies or restarts (a lease would leave the canary unwatched until it expires), the
write is idempotent, and the read is cheap and runs only while a canary is running. The
delay from a bad call to the rollback is the call log's flush (`[diagnostics]
flush_interval_s`, 0.5 s) plus one interval plus the snapshot's publication (under a
second with Redis): about two seconds, over which the canary side takes its share of the
calls (docs/canary.md has the bound).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping

from callout_server.canary.figures import crossed
from callout_server.canary.repository import CanaryRepository
from callout_server.canary.service import CanaryService, limits_of
from callout_server.canary.split import RunningCanary
from callout_server.config.live import LiveWrites

log = logging.getLogger(__name__)


class CanaryMonitor:
    def __init__(self, canaries: CanaryService, writes: LiveWrites,
                 running: Callable[[], Mapping[str, RunningCanary]], *,
                 interval_s: float = 1.0) -> None:
        self._canaries = canaries
        self._writes = writes
        self._running = running
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None
        self._failing = False  # one warning per streak of failed checks, not one a second

    async def start(self) -> None:
        self._task = asyncio.create_task(self._watch(), name="canary-monitor")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            for canary in list(self._running().values()):
                try:
                    await self.check(canary.id)
                except asyncio.CancelledError:
                    raise
                except Exception:  # the database down, a bug: the next round tries again
                    if not self._failing:
                        log.warning("canary check failed", exc_info=True,
                                    extra={"canary_id": canary.id})
                    self._failing = True
                else:
                    self._failing = False

    async def check(self, canary_id: int) -> bool:
        """True when this check ended the canary (rolled back)."""
        async with self._writes.read() as session:
            row = await CanaryRepository(session).get(canary_id)
            if row is None or row.status != "running":
                return False
            numbers = await self._canaries.figures(session, row)
            reason = crossed(limits_of(row), numbers.canary)
        if reason is None:
            return False
        ended = await self._canaries.rollback_if_crossed(canary_id)
        if ended:
            log.warning("canary rolled back", extra={"canary_id": canary_id, **{
                f"limit_{k}": v for k, v in reason.items()}})
        return ended
