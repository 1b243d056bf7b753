"""Per-endpoint Prometheus metrics (the default registry, served on `/metrics`).

Labels: `config` (the configuration's id, or `file:<tier>` for a config.toml section) and
`endpoint` (the base URL without credentials): bounded by what operators configure, never
by what a client sends. In-flight and state are read when scraped (no cost per call).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 30.0)
_LABELS = ("config", "endpoint")

REQUESTS = Counter("callout_upstream_requests_total",
                   "Requests sent to an upstream endpoint (attempts, hedges and probes included)",
                   _LABELS)
FAILURES = Counter("callout_upstream_failures_total",
                   "Failed requests to an upstream endpoint, by diagnostic code (and HTTP status)",
                   (*_LABELS, "code"))
HEDGES = Counter("callout_upstream_hedges_total",
                 "Hedged requests sent to this endpoint because the first had not answered",
                 _LABELS)
LATENCY = Histogram("callout_upstream_latency_seconds",
                    "Time to the answer (streams: to the first token) of an upstream endpoint",
                    _LABELS, buckets=_BUCKETS)
IN_FLIGHT = Gauge("callout_upstream_in_flight", "Requests in flight to an upstream endpoint",
                  _LABELS)
STATE = Gauge("callout_upstream_state",
              "1 for the endpoint's current state: healthy, cooling_down or probing",
              (*_LABELS, "state"))
