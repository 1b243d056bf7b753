"""Both sides' figures from the call log's counts, and the rollback check. Pure functions.

Compared the way shadow evaluation compares (callout_server/evaluation/): decisions, the
share of fallbacks (decisions the model did not give: the dialer got its fallback intent,
or an error without one; a chat turn: one the model did not answer), the share of errors (the endpoints failed: timeouts, upstream and
connect errors, an answer too large), the codes, p50/p95 latency, and agreement where both
sides answered the same node. The calls are different phone calls, so agreement is
distributional: per node, the overlap of the two sides' intent shares (sum of the smaller
share of each intent), weighted by the canary's decisions on that node.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from callout_server.canary.schemas import Agreement, Figures, SideFigures

# Decisions whose endpoints failed (the rest of the non-ok codes are the model's answers).
ERROR_CODES = frozenset({"timeout", "deadline_exceeded", "upstream_error", "connect_error",
                         "response_too_large", "internal_error"})
# A hang-up, a barge-in (a chat turn cut or superseded by the customer): nobody's failure.
NOT_FALLBACK = frozenset({"ok", "cancelled", "superseded"})
SIDES = ("active", "canary")
LIMITS = (("fallback_rate", "max_fallback_rate"), ("error_rate", "max_error_rate"),
          ("p95_ms", "max_p95_ms"))


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def side(codes: Mapping[str, int], p50: float | None, p95: float | None) -> SideFigures:
    calls = sum(codes.values())
    fallbacks = sum(n for c, n in codes.items() if c not in NOT_FALLBACK)
    errors = sum(n for c, n in codes.items() if c in ERROR_CODES)
    return SideFigures(calls=calls, fallbacks=fallbacks, errors=errors,
                       fallback_rate=_rate(fallbacks, calls), error_rate=_rate(errors, calls),
                       p50_ms=p50, p95_ms=p95,
                       codes=dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))))


def agreement(intents: Iterable[tuple[str, str | None, Any, int]]) -> Agreement:
    by_node: dict[str | None, dict[str, dict[Any, int]]] = defaultdict(
        lambda: {"active": defaultdict(int), "canary": defaultdict(int)})
    for variant, node, intent, n in intents:
        if variant in SIDES:
            by_node[node][variant][intent] += n
    weighted, calls, nodes = 0.0, 0, 0
    for sides in by_node.values():
        active, canary = sides["active"], sides["canary"]
        a_total, c_total = sum(active.values()), sum(canary.values())
        if not a_total or not c_total:
            continue
        overlap = sum(min(active.get(i, 0) / a_total, n / c_total) for i, n in canary.items())
        weighted += overlap * c_total
        calls += c_total
        nodes += 1
    return Agreement(intent=round(weighted / calls, 4) if calls else None, nodes=nodes,
                     calls=calls)


def figures(codes: Iterable[tuple[str, str, int]],
            percentiles: Mapping[str, tuple[float | None, float | None]],
            intents: Iterable[tuple[str, str | None, Any, int]], at: datetime) -> Figures:
    per: dict[str, dict[str, int]] = {s: {} for s in SIDES}
    for variant, code, n in codes:
        if variant in per:
            per[variant][code] = per[variant].get(code, 0) + n
    sides = {s: side(per[s], *percentiles.get(s, (None, None))) for s in SIDES}
    return Figures(active=sides["active"], canary=sides["canary"],
                   agreement=agreement(intents), at=at)


def crossed(limits: Mapping[str, Any], canary: SideFigures) -> dict[str, Any] | None:
    """The first limit the canary side is over, once it has `min_calls` decisions."""
    if canary.calls < limits["min_calls"]:
        return None
    for name, key in LIMITS:
        limit, value = limits.get(key), getattr(canary, name)
        if limit is not None and value is not None and value > limit:
            return {"limit": name, "value": value, "max": limit, "calls": canary.calls}
    return None
