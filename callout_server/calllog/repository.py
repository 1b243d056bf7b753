"""Reads of the call log: filtered keyset pages and windowed summaries."""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.calllog.models import LLMCallLog
from callout_server.calllog.wording import worded
from callout_server.i18n import Locale

CANCELLED = "cancelled"  # a barge-in or a newer turn stopped the call (chat)

RECORD_FIELDS = (
    "id", "at", "tier", "config_id", "model", "vendor", "code", "message", "advice",
    "finish_reason", "latency_ms", "ttft_ms", "prompt_tokens", "completion_tokens",
    "reasoning_tokens", "max_tokens", "status", "call_id", "node_id", "source",
    "endpoint", "attempts",  # which endpoint served the call, and the requests it took
    "redacted",  # what redaction replaced: {kind: count} (docs/privacy.md)
    "key_id", "campaign", "cost", "currency",  # who it was for and what it cost (0013)
    "variant",  # the side of a running canary ("active" | "canary"), else None
    "speech",  # what a chat run's guard and filler did: counts, never a term (0016)
)


def record_dict(row: LLMCallLog, locale: Locale = "zh") -> dict[str, Any]:
    """A record as ops read it, its message and advice worded in `locale`."""
    out = {name: getattr(row, name) for name in RECORD_FIELDS}
    out["at"] = row.at.isoformat().replace("+00:00", "Z")
    out["message"], out["advice"] = worded(row, locale)
    if row.source == "rule":  # what the phrase rules decided, without a model call
        out["rule"] = {"name": row.reason, **(row.reason_args or {})}
    return out


async def list_records(session: AsyncSession, *, limit: int, before_id: int | None = None,
                       since: datetime | None = None, until: datetime | None = None,
                       **equals: str | None) -> list[LLMCallLog]:
    """Newest first; `before_id` continues a page (keyset: no OFFSET scans)."""
    q = select(LLMCallLog).order_by(LLMCallLog.id.desc()).limit(limit)
    for column, value in equals.items():
        if value:
            q = q.where(getattr(LLMCallLog, column) == value)
    if before_id is not None:
        q = q.where(LLMCallLog.id < before_id)
    if since is not None:
        q = q.where(LLMCallLog.at >= since)
    if until is not None:
        q = q.where(LLMCallLog.at < until)
    return list((await session.scalars(q)).all())


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p90": None, "p99": None}
    if len(values) == 1:
        return {"p50": values[0], "p90": values[0], "p99": values[0]}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 1), "p90": round(cuts[89], 1), "p99": round(cuts[98], 1)}


async def summary(session: AsyncSession, since: datetime) -> dict[str, Any]:
    """Counts per tier and code, latency and time-to-first-token percentiles per tier.

    Live traffic only: shadow evaluation replays and playground try-outs are left out.
    `latency_ms` is every call's; `completed_latency_ms` leaves out the cancelled ones (a
    chat turn stopped by a barge-in lasted as long as the customer let it, which says
    nothing about the model), counted apart in `cancelled`. `speech` counts what the chat
    guard and filler did (sentences per action and lexicon, fillers spoken), for the tier
    and per configuration (`configs`: one entry per config_id that had any).
    """
    live = (LLMCallLog.at >= since) & (LLMCallLog.source == "live")
    counts = await session.execute(
        select(LLMCallLog.tier, LLMCallLog.code, func.count())
        .where(live).group_by(LLMCallLog.tier, LLMCallLog.code)
    )
    tiers: dict[str, dict[str, Any]] = {}
    for tier, code, n in counts:
        entry = tiers.setdefault(tier, {"count": 0, "codes": {}})
        entry["count"] += n
        entry["codes"][code] = n
    # Percentiles computed here rather than with percentile_cont, so SQLite works too; the
    # window bounds the rows and only two float columns are read.
    latency: dict[str, list[float]] = defaultdict(list)
    completed: dict[str, list[float]] = defaultdict(list)
    ttft: dict[str, list[float]] = defaultdict(list)
    rows = await session.execute(
        select(LLMCallLog.tier, LLMCallLog.code, LLMCallLog.latency_ms, LLMCallLog.ttft_ms)
        .where(live)
    )
    for tier, code, lat, first in rows:
        if lat is not None:
            latency[tier].append(lat)
            if code != CANCELLED:
                completed[tier].append(lat)
        if first is not None:
            ttft[tier].append(first)
    speech = await _speech_counts(session, live)
    for tier, entry in tiers.items():
        entry["speech"] = speech.get(tier) or {**_no_speech(), "configs": []}
        entry["latency_ms"] = _percentiles(sorted(latency[tier]))
        entry["completed_latency_ms"] = _percentiles(sorted(completed[tier]))
        entry["ttft_ms"] = _percentiles(sorted(ttft[tier]))
        entry["cancelled"] = entry["codes"].get(CANCELLED, 0)
    return tiers


def _no_speech() -> dict[str, Any]:
    return {"guard": {}, "lexicons": {}, "fillers": 0}


def _add_speech(into: dict[str, Any], value: dict[str, Any]) -> None:
    for key in ("guard", "lexicons"):
        counts = into[key]
        for name, n in (value.get(key) or {}).items():
            if isinstance(n, int):
                counts[name] = counts.get(name, 0) + n
    if value.get("filler") is True:
        into["fillers"] += 1


async def _speech_counts(session: AsyncSession, live: Any) -> dict[str, dict[str, Any]]:
    """Per tier: the records' `speech` summed, and per configuration. Only records that
    carry one are read (a chat turn the guard or a filler touched)."""
    rows = await session.execute(
        select(LLMCallLog.tier, LLMCallLog.config_id, LLMCallLog.speech)
        .where(live & LLMCallLog.speech.is_not(None)))
    out: dict[str, dict[str, Any]] = {}
    configs: dict[str, dict[int | None, dict[str, Any]]] = defaultdict(dict)
    for tier, config_id, value in rows:
        if not isinstance(value, dict):
            continue
        total = out.setdefault(tier, _no_speech())
        per = configs[tier].setdefault(config_id, {"config_id": config_id, **_no_speech()})
        _add_speech(total, value)
        _add_speech(per, value)
    for tier, total in out.items():
        total["configs"] = sorted(configs[tier].values(),
                                  key=lambda c: (c["config_id"] is None, c["config_id"] or 0))
    return out
