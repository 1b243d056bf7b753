"""Usage and cost reads: `GET /api/admin/usage` and `GET /api/admin/calls/{call_id}`.

    await usage.summary("campaign", since, until)   # the daily summary, grouped
    await usage.call("c-20261129-0001", locale)     # one phone call's model calls, in order

One session per read, SQL in `usage_queries.py`. `since`/`until` select whole UTC days (the
summary is daily): from the day holding `since` to the day holding `until` (an `until` at
midnight leaves that day out); 30 days up to now by default, at most 400.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from callout_server.calllog import usage_queries
from callout_server.calllog.erasure import CallNotFound
from callout_server.calllog.repository import record_dict
from callout_server.calllog.usage_queries import GroupBy
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.errors import UnprocessableEntity
from callout_server.i18n import Locale, msg
from callout_server.privacy import current as privacy

DEFAULT_DAYS = 30
MAX_DAYS = 400


class UsageQueries:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def summary(self, group_by: GroupBy, since: datetime | None,
                      until: datetime | None) -> dict[str, Any]:
        end = until or utcnow()
        try:
            start = since or end - timedelta(days=DEFAULT_DAYS - 1)
            last = end.date()
            if until is not None and end.time() == time(0):  # until midnight: not that day
                last -= timedelta(days=1)
        except OverflowError:  # a year-1 `until`: nothing can be before it
            start, last = datetime.max, date.min
        if start.date() > last:
            raise UnprocessableEntity(msg("until_before_since"), fields=[
                {"field": "until", "code": "until_before_since", "message": msg("until_before_since")}])
        if (last - start.date()).days >= MAX_DAYS:
            raise UnprocessableEntity(msg("usage_window_too_long", days=MAX_DAYS), fields=[
                {"field": "since", "code": "usage_window_too_long",
                 "message": msg("usage_window_too_long", days=MAX_DAYS)}])
        async with self._db.session() as s:
            items = await usage_queries.usage(s, group_by, start.date(), last)
        return {"group_by": group_by, "since": start.date().isoformat(),
                "until": last.isoformat(), "items": items}

    async def call(self, call_id: str, locale: Locale) -> dict[str, Any]:
        """The call's records under its id as given or as stored (its pseudonym, if the id
        itself holds personal data: docs/privacy.md)."""
        async with self._db.session() as s:
            rows = await usage_queries.call_records(s, stored_ids(call_id))
        if not rows:
            raise CallNotFound()
        records = [record_dict(r, locale) for r in rows]
        costs = {r["currency"] for r in records if r["currency"]}
        totals = {
            "model_calls": len(records),
            "tokens": sum((r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0)
                          for r in records),
            "cost": sum(r["cost"] or 0.0 for r in records) if len(costs) == 1 else None,
            "currency": next(iter(costs)) if len(costs) == 1 else None,
            "latency_ms": round(sum(r["latency_ms"] or 0.0 for r in records), 1),
        }
        campaign = next((r["campaign"] for r in records if r["campaign"]), None)
        return {"call_id": call_id, "campaign": campaign, "records": records, "totals": totals}


def stored_ids(call_id: str) -> frozenset[str]:
    stored, _ = privacy().text(call_id)
    return frozenset(k for k in (call_id, stored) if k)
