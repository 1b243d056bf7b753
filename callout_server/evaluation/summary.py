"""An evaluation's comparison from its per-call results. Pure functions.

    intent_agreement   agreeing / compared, over calls whose node offered intents
    slot_agreement     agreeing / compared, over calls whose node asked for slots
    candidate/recorded p50_ms, p95_ms (whole decisions, retry included), fallbacks, codes
                       (`ok` or the diagnostic code), candidate tokens
    by_node            the same per node, most calls first (one node often carries the
                       disagreements)
    latency_histogram  counts of both per latency bucket (the console's chart)

Rates are fractions (0-1) rounded to 4 places, `null` when nothing was compared.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# Upper bounds (ms) of the histogram's buckets; the last bucket is everything above.
BUCKETS_MS = (50, 100, 200, 300, 500, 750, 1000, 1500, 2500, 5000)


class Result(Protocol):
    node_id: str | None
    recorded_fallback: bool
    recorded_code: str
    recorded_latency_ms: float | None
    candidate_fallback: bool
    candidate_code: str
    candidate_latency_ms: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    intent_agrees: bool | None
    slots_agree: bool | None
    agrees: bool


def percentile(values: Sequence[float], p: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[p - 1], 1)


def rate(flags: Iterable[bool | None]) -> float | None:
    compared = [f for f in flags if f is not None]
    return round(sum(compared) / len(compared), 4) if compared else None


def _side(rows: Sequence[Result], side: str) -> dict[str, Any]:
    latencies = sorted(v for r in rows if (v := getattr(r, f"{side}_latency_ms")) is not None)
    codes = Counter(getattr(r, f"{side}_code") for r in rows)
    out: dict[str, Any] = {
        "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95),
        "fallbacks": sum(1 for r in rows if getattr(r, f"{side}_fallback")),
        "codes": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))),
    }
    if side == "candidate":
        out["tokens"] = {k: sum(getattr(r, k) or 0 for r in rows)
                         for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    return out


def compare_rows(rows: Sequence[Result]) -> dict[str, Any]:
    return {
        "calls": len(rows),
        "agreeing": sum(1 for r in rows if r.agrees),
        "intent_agreement": rate(r.intent_agrees for r in rows),
        "slot_agreement": rate(r.slots_agree for r in rows),
        "candidate": _side(rows, "candidate"),
        "recorded": _side(rows, "recorded"),
    }


def histogram(rows: Sequence[Result]) -> dict[str, Any]:
    def counts(side: str) -> list[int]:
        out = [0] * (len(BUCKETS_MS) + 1)
        for r in rows:
            value = getattr(r, f"{side}_latency_ms")
            if value is not None:
                out[next((i for i, b in enumerate(BUCKETS_MS) if value <= b), len(BUCKETS_MS))] += 1
        return out

    return {"bounds_ms": list(BUCKETS_MS), "candidate": counts("candidate"),
            "recorded": counts("recorded")}


def summarize(rows: Sequence[Result], *, skipped: int = 0) -> dict[str, Any]:
    by_node: dict[str | None, list[Result]] = defaultdict(list)
    for r in rows:
        by_node[r.node_id].append(r)
    nodes = sorted(by_node.items(), key=lambda kv: (-len(kv[1]), kv[0] or ""))
    return {
        **compare_rows(rows),
        "skipped": skipped,
        "by_node": [{"node_id": node, **compare_rows(node_rows)} for node, node_rows in nodes],
        "latency_histogram": histogram(rows),
    }
