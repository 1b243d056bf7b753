"""Reading the trail (filtered keyset pages, newest first) and purging it past retention.

Retention runs in every worker as a background task (an idempotent `DELETE` in bounded
batches, so a long backlog never holds a long lock); the first purge waits one interval, so
a restart is no reason to hit the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from callout_server.audit.models import AuditEvent
from callout_server.audit.schemas import AuditEventOut, AuditPage
from callout_server.audit.settings import AuditSettings
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.db.retention import purge_every

log = logging.getLogger(__name__)

PURGE_BATCH = 5000


class AuditLog:
    def __init__(self, db: Database, settings: AuditSettings) -> None:
        self._db = db
        self.retention = timedelta(days=settings.retention_days)
        self._interval_s = settings.purge_interval_s
        self._purger: asyncio.Task[None] | None = None

    async def page(self, *, limit: int, before_id: int | None = None,
                   actor: str | None = None, action: str | None = None,
                   target: str | None = None, since: datetime | None = None,
                   until: datetime | None = None) -> AuditPage:
        """Newest first. `action` without a dot names a family (`config` = `config.*`)."""
        q = select(AuditEvent).order_by(AuditEvent.id.desc()).limit(limit)
        if before_id is not None:
            q = q.where(AuditEvent.id < before_id)
        if actor:
            q = q.where(AuditEvent.actor == actor)
        if action:
            family = "." not in action
            q = q.where(AuditEvent.action.startswith(action + ".", autoescape=True)
                        if family else AuditEvent.action == action)
        if target:
            q = q.where(AuditEvent.target == target)
        if since is not None:
            q = q.where(AuditEvent.at >= since)
        if until is not None:
            q = q.where(AuditEvent.at < until)
        async with self._db.session() as s:
            rows = (await s.scalars(q)).all()
        items = [AuditEventOut.model_validate(r, from_attributes=True) for r in rows]
        return AuditPage(items=items,
                         next_before_id=items[-1].id if len(items) == limit else None)

    async def purge_expired(self, now: datetime | None = None) -> int:
        """Delete events older than the retention, in batches; returns how many."""
        cutoff = (now or utcnow()) - self.retention
        total = 0
        while True:
            oldest = (select(AuditEvent.id).where(AuditEvent.at < cutoff)
                      .order_by(AuditEvent.id).limit(PURGE_BATCH))
            async with self._db.session() as s:
                result = await s.execute(delete(AuditEvent).where(AuditEvent.id.in_(oldest)))
            count = int(result.rowcount or 0)  # type: ignore[attr-defined]
            total += count
            if count < PURGE_BATCH:
                return total

    async def start(self) -> None:
        self._purger = asyncio.create_task(purge_every(
            self._interval_s, self.purge_expired, logger=log,
            purged="audit trail: purged %d events past retention",
            failed="audit purge failed: %s"), name="audit-purge")

    async def stop(self) -> None:
        purger, self._purger = self._purger, None
        if purger is not None:
            purger.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait([purger], timeout=2.0)

