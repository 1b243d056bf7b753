"""`GET /api/admin/upstreams`: this worker's view of every endpoint it calls or may call.

The pools' live state (callout_server.upstream, in memory) for the active configurations,
their fallbacks and anything else called since start, each named with its configuration's
name and tier, and its role in the serving routes (active, fallback, or none: called earlier,
a config.toml section no longer serving, an evaluated candidate). No database read. An
endpoint keeps its last error as a `Diagnostic` (code and numbers); it is worded here, in the
reader's language.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from callout_server.config.snapshot import ConfigStore
from callout_server.i18n import current
from callout_server.upstream import Upstreams, config_key


class UpstreamOut(BaseModel):
    config_id: int | None  # null: a config.toml section (`config` says which)
    config: str  # the configuration's id, or file:<tier>
    config_name: str | None
    tier: str | None
    role: str | None  # "active", "fallback", or null (called earlier, no longer configured)
    base_url: str  # credentials masked
    weight: float
    state: str  # healthy | cooling_down | probing
    in_flight: int
    # The balancer's peak-EWMA: decays toward 0 while idle; null before the first answer.
    latency_ms: float | None
    # What was observed: the latest answer's latency, the median of the last 50, and when.
    last_latency_ms: float | None
    median_latency_ms: float | None
    last_answered_at: str | None
    error_rate: float  # share of failed requests among the recent ones
    cooldown_until: str | None
    last_error: dict[str, Any] | None  # worded in the reader's language
    # Taken out of service by hand (POST /api/admin/upstreams/drain): no new request goes here.
    drained: bool = False
    drained_by: str | None = None
    drained_at: str | None = None


TIER_ORDER = {"nlu": 0, "chat": 1, "script": 2}


class UpstreamList(BaseModel):
    items: list[UpstreamOut]


class UpstreamHealth:
    def __init__(self, upstreams: Upstreams, store: ConfigStore) -> None:
        self._upstreams = upstreams
        self._store = store

    def items(self) -> UpstreamList:
        routes = self._store.current.routes()
        roles: dict[str, str] = {}
        for route in routes:
            for i, cfg in enumerate(route.chain):
                if config_key(cfg) not in roles or i == 0:
                    roles[config_key(cfg)] = "active" if i == 0 else "fallback"
        items = []
        locale = current()
        for view in self._upstreams.views(routes):
            times = {k: _iso(view[k]) for k in ("cooldown_until", "last_answered_at", "drained_at")}
            error = view["last_error"]
            items.append(UpstreamOut(
                **view | times | {"last_error": error.to_dict(locale) if error else None},
                role=roles.get(view["config"])))
        items.sort(key=lambda i: (i.role is None, TIER_ORDER.get(i.tier or "", 9),
                                  i.role != "active", i.config, i.base_url))
        return UpstreamList(items=items)


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
