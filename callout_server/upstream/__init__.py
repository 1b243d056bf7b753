"""Upstream pools: replicas, failover to other configurations, hedged calls, passive health.

    upstreams = Upstreams(LLMClient())
    served = await upstreams.complete(Route(cfg, fallbacks), req, deadline_s=1.5)
    served.value, served.report        # the answer; what the call did (CallReport)

One floor above the shared client (`callout_server.llm`, the only package it imports):
the tiers call models through it, the configuration layer builds its `Route`s, and the
console reads `Upstreams.views()`. State is per worker and in memory (endpoint.py); with a
channel wired (`Upstreams.share_health`), cool-downs and probe verdicts are shared by the
workers (shared_health.py).
"""

from __future__ import annotations

from callout_server.upstream.calls import Call
from callout_server.upstream.deadline import Deadline
from callout_server.upstream.endpoint import STATES, Drain, EndpointState, HealthPolicy, State
from callout_server.upstream.registry import Upstreams, config_key
from callout_server.upstream.report import CallReport
from callout_server.upstream.route import Route, Served, UpstreamError
from callout_server.upstream.shared_health import HealthChannel, HealthNotice, SharedHealth
from callout_server.upstream.streams import PoolStream

__all__ = [
    "STATES",
    "Call",
    "CallReport",
    "Deadline",
    "Drain",
    "EndpointState",
    "HealthChannel",
    "HealthNotice",
    "HealthPolicy",
    "PoolStream",
    "Route",
    "Served",
    "SharedHealth",
    "State",
    "UpstreamError",
    "Upstreams",
    "config_key",
]
