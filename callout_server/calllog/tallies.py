"""Counters and histograms of every model call, kept as plain numbers, exported on a scrape.

Each record adds to about ten series (a tier's calls, latency and tokens; its service key's
calls, tokens and cost). prometheus_client's `Counter.inc()` checks the metric, takes a lock
and adds (~0.7-1 µs here), a histogram's `observe()` twice that: ~6 µs per decision for
numbers read once every scrape interval. Here a child is a small object whose fields are
added to on the event loop (every record is made there), and a collector registered with
prometheus_client's registry turns them into the same families when `/metrics` is read:
same names, labels, `_total`, `_created`, `_bucket`/`_sum`/`_count`.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString


class Count:
    """One counter child: `value += n` (n >= 0)."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class Spread:
    """One histogram child: a count per bucket (not cumulative), their sum."""

    __slots__ = ("bounds", "counts", "created", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound (+Inf)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1  # le: a bound is inclusive
        self.sum += value


C = TypeVar("C", Count, Spread)


class _Family(Collector, Generic[C]):
    """A family's children by label values; `_child()` makes one."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], *,
                 registry: CollectorRegistry = REGISTRY) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, tuple(labelnames)
        self._children: dict[tuple[str, ...], C] = {}
        registry.register(self)

    def _child(self) -> C:
        raise NotImplementedError

    def labels(self, *values: str) -> C:
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: {len(self.labelnames)} label values expected")
            child = self._children[values] = self._child()
        return child


class Counters(_Family[Count]):
    """A counter family (`name` without `_total`) of `Count` children, one per label values."""

    def _child(self) -> Count:
        return Count()

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):
            family.add_metric(values, child.value, created=child.created)
        yield family


class Histograms(_Family[Spread]):
    """A histogram family of `Spread` children with the same buckets."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str],
                 buckets: Sequence[float], *, registry: CollectorRegistry = REGISTRY) -> None:
        self.bounds = tuple(sorted(float(b) for b in buckets if b != float("inf")))
        super().__init__(name, documentation, labelnames, registry=registry)

    def _child(self) -> Spread:
        return Spread(self.bounds)

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        edges = [*(floatToGoString(b) for b in self.bounds), "+Inf"]
        for values, child in list(self._children.items()):
            running, buckets = 0, []
            for edge, n in zip(edges, child.counts, strict=True):
                running += n
                buckets.append((edge, float(running)))
            family.add_metric(list(values), buckets, child.sum)
            family.add_sample(f"{self.name}_created",
                              dict(zip(self.labelnames, values, strict=True)), child.created)
        yield family
