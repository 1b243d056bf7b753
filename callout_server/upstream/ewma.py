"""Peak-EWMA latency: the load balancer's view of how fast an endpoint answers now.

The estimate jumps to any sample above it at once (a replica that slows down is avoided from
its next slow answer on) and decays toward lower samples with time constant `decay_s`; with
no samples it decays toward zero, so an endpoint that was avoided gets tried again now and
then (the decay in Finagle's and tower's peak-EWMA balancers). Pure: the clock is passed in.
"""

from __future__ import annotations

import math


class PeakEwma:
    __slots__ = ("_at", "_decay_s", "estimate_s", "sampled")

    def __init__(self, decay_s: float, initial_s: float) -> None:
        self._decay_s = decay_s
        self.estimate_s = initial_s
        self._at: float | None = None
        self.sampled = False  # a real answer was seen (else the estimate is the default)

    def observe(self, sample_s: float, now: float) -> None:
        if sample_s >= self.estimate_s or self._at is None:
            self.estimate_s = sample_s  # peak: slow news is believed at once
        else:
            w = math.exp(-(now - self._at) / self._decay_s)
            self.estimate_s = self.estimate_s * w + sample_s * (1.0 - w)
        self._at = now
        self.sampled = True

    def raise_to(self, floor_s: float, now: float) -> None:
        """At least `floor_s` from now on (a failure, or a request still unanswered)."""
        if floor_s > self.current(now):
            self.estimate_s = floor_s
            self._at = now

    def current(self, now: float) -> float:
        """The estimate decayed toward zero for the time without samples."""
        if self._at is None:
            return self.estimate_s
        return self.estimate_s * math.exp(-(now - self._at) / self._decay_s)


class FailureShare:
    """The recent share of failed attempts: an EWMA over outcomes (about the last 20)."""

    __slots__ = ("value",)
    ALPHA = 0.05

    def __init__(self) -> None:
        self.value = 0.0

    def add(self, failed: bool) -> None:
        self.value += self.ALPHA * ((1.0 if failed else 0.0) - self.value)
