"""Prometheus metrics of this worker (prometheus_client's default registry).

Labels are bounded sets (tier, code, token kind): never a model name, call id or anything
a client controls, so the series count stays small. No key or prompt ever reaches a label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import Counter, Gauge

from callout_server.calllog.records import CallRecord
from callout_server.calllog.tallies import Counters, Histograms

_LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 30.0, 60.0)

# Added to by every record: plain numbers, exported on a scrape (tallies.py).
LLM_REQUESTS = Counters("callout_llm_requests", "LLM calls by tier and outcome code",
                        ["tier", "code"])
LLM_LATENCY = Histograms("callout_llm_latency_seconds", "LLM call latency", ["tier"],
                         buckets=_LATENCY_BUCKETS)
LLM_TTFT = Histograms("callout_llm_ttft_seconds", "Time to first token of streamed calls",
                      ["tier"], buckets=_LATENCY_BUCKETS)
LLM_TOKENS = Counters("callout_llm_tokens", "Tokens by tier and kind", ["tier", "kind"])
DIAG_DROPPED = Counter("callout_diagnostics_dropped_total",
                       "Call-log records dropped because the write queue was full")
DIAG_REJECTED = Counter("callout_diagnostics_rejected_total",
                        "Call-log records the database refused (bad data), isolated and dropped")
DIAG_QUEUED = Gauge("callout_diagnostics_queue_depth", "Call-log records waiting to be written")
DIAG_WRITER_STALLED = Gauge("callout_diagnostics_writer_stalled",
                            "1 while the call-log writer is stalled: records have waited "
                            "[diagnostics] stalled_after_s with no write succeeding")
DIAG_OLDEST_PENDING = Gauge("callout_diagnostics_oldest_pending_seconds",
                            "Age of the oldest call-log record not yet written (0: none waits)")
EVALUATION_CALLS = Counter("callout_evaluation_calls_total",
                           "Shadow-evaluation replays by outcome code (not live traffic)",
                           ["code"])
CONFIG_GENERATION = Gauge("callout_config_generation",
                          "Model-configuration generation this worker serves")


class _TierSeries:
    """One tier's children of the series above, bound once (a dict lookup per child saved,
    five times per record)."""

    __slots__ = ("completion", "latency", "prompt", "reasoning", "requests", "tier", "ttft")

    def __init__(self, tier: str) -> None:
        self.tier = tier
        self.requests: dict[str, Any] = {}  # code -> child (codes: the catalogue's, bounded)
        self.latency = LLM_LATENCY.labels(tier)
        self.ttft = LLM_TTFT.labels(tier)
        self.prompt = LLM_TOKENS.labels(tier, "prompt")
        self.completion = LLM_TOKENS.labels(tier, "completion")
        self.reasoning = LLM_TOKENS.labels(tier, "reasoning")


_SERIES: dict[str, _TierSeries] = {}


def _series(tier: str) -> _TierSeries:
    series = _SERIES.get(tier)
    if series is None:
        series = _SERIES[tier] = _TierSeries(tier)
    return series


def observe(rec: CallRecord) -> None:
    series = _SERIES.get(rec.tier) or _series(rec.tier)
    requests = series.requests.get(rec.code)
    if requests is None:
        requests = series.requests[rec.code] = LLM_REQUESTS.labels(rec.tier, rec.code)
    requests.inc()
    if rec.latency_ms is not None:
        series.latency.observe(rec.latency_ms / 1000)
    if rec.ttft_ms is not None:
        series.ttft.observe(rec.ttft_ms / 1000)
    add_tokens(series, rec)


def add_tokens(series: Any, rec: CallRecord) -> None:
    """The vendor-reported tokens of `rec` onto `series`' prompt, completion and reasoning
    children (a tier's, or a service key's: calllog/usage_metrics.py)."""
    if rec.prompt_tokens:
        series.prompt.inc(rec.prompt_tokens)
    if rec.completion_tokens:
        series.completion.inc(rec.completion_tokens)
    if rec.reasoning_tokens:
        series.reasoning.inc(rec.reasoning_tokens)


def watch_writer(health: Callable[[], Mapping[str, Any]]) -> None:
    """The writer's health (what /healthz reports) read when /metrics is scraped."""
    DIAG_WRITER_STALLED.set_function(
        lambda: 1.0 if health()["diagnostics_writer"] == "stalled" else 0.0)
    DIAG_OLDEST_PENDING.set_function(lambda: health()["diagnostics_oldest_pending_s"] or 0.0)
