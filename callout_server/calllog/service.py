"""What ops read from the call log: filtered keyset pages, CSV exports, windowed summaries.

Reads only (the batched writer is `recorder.py`); one session per read, SQL in
`repository.py`. The admin routes call this, never the database directly.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from typing import Any

from callout_server.calllog import repository
from callout_server.calllog.export import csv_chunk
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.errors import UnprocessableEntity
from callout_server.i18n import Locale, msg

_WINDOW = re.compile(r"^(\d{1,4})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
MAX_WINDOW = timedelta(days=90)
EXPORT_PAGE = 1000  # rows per read (and per CSV chunk) of an export
EXPORT_MAX_ROWS = 100_000  # an export's bound: narrow the filter for more


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

    async def export(self, *, max_rows: int, since: datetime | None, until: datetime | None,
                     locale: Locale = "zh", **equals: str | None) -> AsyncIterator[str]:
        """The filtered records, newest first, at most `max_rows`, as CSV chunks: one keyset
        page per chunk, each read in its own short session (nothing held open between).

        The first page is read before this returns, so a database that is down is the
        route's error answer, not a download cut short after its header."""

        async def page(before_id: int | None, size: int) -> list[Any]:
            async with self._db.session() as s:
                return await repository.list_records(s, limit=size, before_id=before_id,
                                                     since=since, until=until, **equals)

        def worded(rows: list[Any]) -> Iterator[dict[str, Any]]:
            return (repository.record_dict(r, locale) for r in rows)

        asked = min(EXPORT_PAGE, max_rows)
        first = await page(None, asked)

        async def chunks() -> AsyncIterator[str]:
            rows, size, written = first, asked, 0
            yield csv_chunk(worded(rows), header=True)
            while True:
                written += len(rows)
                size_next = min(EXPORT_PAGE, max_rows - written)
                if len(rows) < size or size_next <= 0:
                    return  # that was the last page, or the bound is reached
                rows, size = await page(rows[-1].id, size_next), size_next
                if not rows:
                    return
                yield csv_chunk(worded(rows))

        return chunks()

    async def summary(self, window: str) -> dict[str, Any]:
        since = utcnow() - parse_window(window)
        async with self._db.session() as s:
            tiers = await repository.summary(s, since)
        return {"window": window, "since": since.isoformat().replace("+00:00", "Z"),
                "tiers": tiers, "dropped": self._recorder.dropped}
