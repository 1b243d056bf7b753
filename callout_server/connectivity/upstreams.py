"""`GET /api/admin/upstreams`: this worker's view of every endpoint it calls or may call.

The pools' live state (callout_server.upstream, in memory) for the active configurations,
their fallbacks and anything else called since start, named with the configuration's tier
and name from the snapshot. No database read. An endpoint keeps its last error as a
`Diagnostic` (code and numbers); it is worded here, in the reader's language.
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
    latency_ms: float | None  # peak-EWMA, null before the first answer
    error_rate: float  # share of failed requests among the recent ones
    cooldown_until: str | None
    last_error: dict[str, Any] | None  # worded in the reader's language


class UpstreamList(BaseModel):
    items: list[UpstreamOut]


class UpstreamHealth:
    def __init__(self, upstreams: Upstreams, store: ConfigStore) -> None:
        self._upstreams = upstreams
        self._store = store

    def items(self) -> UpstreamList:
        routes = self._store.current.routes()
        named: dict[str, tuple[str, str, str]] = {}
        for route in routes:
            for i, cfg in enumerate(route.chain):
                role = "active" if i == 0 else "fallback"
                if config_key(cfg) not in named or role == "active":
                    named[config_key(cfg)] = (cfg.name, cfg.tier, role)
        items = []
        locale = current()
        for view in self._upstreams.views(routes):
            name, tier, role = named.get(view["config"], (None, None, None))
            until, error = view["cooldown_until"], view["last_error"]
            items.append(UpstreamOut(
                **view | {"cooldown_until": _iso(until),
                          "last_error": error.to_dict(locale) if error else None},
                config_name=name, tier=tier, role=role))
        items.sort(key=lambda i: (i.role is None, i.tier or "", i.role != "active", i.config))
        return UpstreamList(items=items)


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
