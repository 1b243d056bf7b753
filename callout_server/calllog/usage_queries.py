"""Reads for usage and cost: the daily summary grouped, and one phone call's model calls.

    await usage(session, "campaign", since_day, until_day)   # from usage_daily: no log scan
    await call_records(session, call_ids)                     # ix_llm_call_logs_call_id

Usage items are one per group: the sums of its summary rows, p50/p95 from their merged
latency histograms, and the cost in its currency; a group billed in several currencies has
`cost`/`currency` null and its `costs` per currency. Calls of an unpriced configuration
count as calls and tokens, never as cost (`unpriced_calls` says how many).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any, Literal

from sqlalchemy import column, func, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.calllog.models import LLMCallLog
from callout_server.calllog.usage_rollup import BOUNDS_MS, LATENCY_COLUMNS, USAGE_DAILY
from callout_server.db.base import SCHEMA

GroupBy = Literal["day", "key", "campaign", "config", "tier"]
GROUP_COLUMN = {"day": "day", "key": "key_id", "campaign": "campaign", "config": "config_id",
                "tier": "tier"}
MAX_CALL_RECORDS = 2000

# Names for the groups, read from their tables without importing their packages.
_KEYS = table("service_keys", column("id"), column("name"), column("prefix"), schema=SCHEMA)
_CONFIGS = table("ai_llm_configs", column("id"), column("name"), schema=SCHEMA)


def percentile(counts: list[int], q: float) -> float | None:
    """The q-quantile (0..1) of a bucketed histogram, interpolated inside its bucket."""
    total = sum(counts)
    if total == 0:
        return None
    rank, seen = q * total, 0
    for i, n in enumerate(counts):
        if n and seen + n >= rank:
            low = BOUNDS_MS[i - 1] if i > 0 else 0.0
            high = BOUNDS_MS[i] if i < len(BOUNDS_MS) else BOUNDS_MS[-1] * 1.5
            return round(low + (high - low) * max(0.0, rank - seen) / n, 1)
        seen += n
    return None


async def usage(session: AsyncSession, group_by: GroupBy, since: date,
                until: date) -> list[dict[str, Any]]:
    t = USAGE_DAILY.c
    group = t[GROUP_COLUMN[group_by]]
    sums = [func.sum(t[c]).label(c) for c in (
        "calls", "errors", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost",
        *LATENCY_COLUMNS)]
    q = (select(group.label("g"), t.currency, *sums)
         .where(t.day >= since, t.day <= until).group_by(group, t.currency).order_by(group))
    items: dict[Any, dict[str, Any]] = {}
    hist: dict[Any, list[int]] = defaultdict(lambda: [0] * len(LATENCY_COLUMNS))
    for row in (await session.execute(q)).mappings():
        g = row["g"]
        item = items.setdefault(g, {
            "group": _group_value(group_by, g), "calls": 0, "errors": 0, "prompt_tokens": 0,
            "completion_tokens": 0, "reasoning_tokens": 0, "costs": {}, "unpriced_calls": 0})
        for name in ("calls", "errors", "prompt_tokens", "completion_tokens",
                     "reasoning_tokens"):
            item[name] += int(row[name] or 0)
        if row["currency"]:
            item["costs"][row["currency"]] = float(row["cost"] or 0.0)
        else:
            item["unpriced_calls"] += int(row["calls"] or 0)
        for i, c in enumerate(LATENCY_COLUMNS):
            hist[g][i] += int(row[c] or 0)
    labels = await _labels(session, group_by, [g for g in items if g])
    out = []
    for g, item in items.items():
        costs = item["costs"]
        one = next(iter(costs.items())) if len(costs) == 1 else None
        item.update(cost=one[1] if one else None, currency=one[0] if one else None,
                    p50_ms=percentile(hist[g], 0.5), p95_ms=percentile(hist[g], 0.95))
        if group_by in ("key", "config"):
            item["label"] = labels.get(g)
        out.append(item)
    return out


def _group_value(group_by: GroupBy, g: Any) -> str | None:
    if group_by == "day":
        return g.isoformat()
    if group_by in ("key", "campaign", "config"):
        return str(g) if g else None  # 0 / "": no key, no campaign, config.toml
    return str(g)


async def _labels(session: AsyncSession, group_by: GroupBy, ids: list[Any]) -> dict[Any, str]:
    if group_by == "key" and ids:
        rows = await session.execute(select(_KEYS.c.id, _KEYS.c.name, _KEYS.c.prefix)
                                     .where(_KEYS.c.id.in_(ids)))
        return {r.id: f"{r.name} ({r.prefix})" for r in rows}
    if group_by == "config" and ids:
        rows = await session.execute(select(_CONFIGS.c.id, _CONFIGS.c.name)
                                     .where(_CONFIGS.c.id.in_(ids)))
        return {r.id: r.name for r in rows}
    return {}


async def call_records(session: AsyncSession, call_ids: frozenset[str]) -> list[LLMCallLog]:
    """Every model call of one phone call, oldest first (live and replayed alike): its id as
    given and as stored (a call id holding personal data is stored as its pseudonym)."""
    q = (select(LLMCallLog).where(LLMCallLog.call_id.in_(call_ids))
         .order_by(LLMCallLog.at, LLMCallLog.id).limit(MAX_CALL_RECORDS))
    return list((await session.scalars(q)).all())
