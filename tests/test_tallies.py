"""The call-log's counters and histograms as plain numbers (calllog/tallies.py): what a scrape
reads is what prometheus_client's own Counter and Histogram would have written."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from callout_server.calllog.tallies import Counters, Histograms

BUCKETS = (0.025, 0.1, 0.5, 1.0, 30.0)


def _exposed(registry: CollectorRegistry) -> str:
    """The text a scrape reads, creation times blanked (they differ by construction)."""
    return re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", generate_latest(registry).decode())


def test_the_same_adds_expose_the_same_text() -> None:
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    calls = [Counter("x_calls_total", "calls", ["tier", "code"], registry=theirs),
             Counters("x_calls", "calls", ["tier", "code"], registry=ours)]
    latency = [Histogram("x_latency_seconds", "latency", ["tier"], buckets=BUCKETS,
                         registry=theirs),
               Histograms("x_latency_seconds", "latency", ["tier"], buckets=BUCKETS,
                          registry=ours)]
    for family in calls:
        family.labels("nlu", "ok").inc()
        family.labels("nlu", "ok").inc(2.5)
        family.labels("chat", "timeout").inc()
    for family in latency:
        for seconds in (0.0, 0.025, 0.026, 0.5, 0.75, 30.0, 31.0, 100.0):  # bounds inclusive
            family.labels("nlu").observe(seconds)
        family.labels("chat").observe(0.2)
    assert _exposed(ours) == _exposed(theirs)
    assert 'x_latency_seconds_bucket{le="0.025",tier="nlu"} 2.0' in _exposed(ours)


def test_a_child_is_bound_once_and_label_counts_are_checked() -> None:
    family = Counters("y_calls", "calls", ["tier"], registry=CollectorRegistry())
    assert family.labels("nlu") is family.labels("nlu")
    with pytest.raises(ValueError, match="y_calls"):
        family.labels("nlu", "extra")
