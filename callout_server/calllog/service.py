"""What ops read from the call log: filtered keyset pages and windowed summaries.

Reads only (the batched writer is `recorder.py`); one session per read, SQL in
`repository.py`. The admin routes call this, never the database directly.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from callout_server.calllog import repository
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.errors import UnprocessableEntity
from callout_server.i18n import Locale, msg

_WINDOW = re.compile(r"^(\d{1,4})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
MAX_WINDOW = timedelta(days=90)


def parse_window(window: str) -> timedelta:
    m = _WINDOW.match(window)
    if not m or int(m.group(1)) == 0:
        raise UnprocessableEntity(msg("window_invalid"), fields=[
            {"field": "window", "code": "window_invalid", "message": msg("window_invalid_field")}])
    delta = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    if delta > MAX_WINDOW:
        raise UnprocessableEntity(msg("window_too_long"), fields=[
            {"field": "window", "code": "window_too_long", "message": msg("window_too_long_field")}])
    return delta


class DiagnosticsQueries:
    def __init__(self, db: Database, recorder: DiagnosticsRecorder) -> None:
        self._db = db
        self._recorder = recorder

    async def page(self, *, limit: int, before_id: int | None, since: datetime | None,
                   until: datetime | None, locale: Locale = "zh",
                   **equals: str | None) -> dict[str, Any]:
        """Newest first, worded in `locale`; `next_before_id` is set when a further page
        may exist."""
        async with self._db.session() as s:
            rows = await repository.list_records(s, limit=limit, before_id=before_id,
                                                 since=since, until=until, **equals)
        items = [repository.record_dict(r, locale) for r in rows]
        return {"items": items,
                "next_before_id": items[-1]["id"] if len(items) == limit else None}

    async def summary(self, window: str) -> dict[str, Any]:
        since = utcnow() - parse_window(window)
        async with self._db.session() as s:
            tiers = await repository.summary(s, since)
        return {"window": window, "since": since.isoformat().replace("+00:00", "Z"),
                "tiers": tiers, "dropped": self._recorder.dropped}
