"""One endpoint's live state in this worker: load, latency, passive health.

    healthy --(failures)--> cooling_down --(time)--> probing --(probe answers)--> healthy
                                 ^                      |
                                 +----(probe fails)-----+   (backoff doubles, up to a cap)

What counts against an endpoint is `LLMCallError.endpoint_fault`: connect errors, 5xx,
408/429 and time limits. A connect error or a 429 cools it down at once (a 429 for as long
as its `Retry-After` asks); other faults after `failure_threshold` in a row. A probe is one
real call; until it answers, no other traffic goes there. All in memory, per worker, like an
outlier detector: no database, no lock (one event loop).

Drained (by hand, `Upstreams.set_drains`): whatever its health, the endpoint takes no new
request (`has_room` is False); requests in flight there finish. Ops take a node out so.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from callout_server.llm import Diagnostic, LLMCallError, LLMConfig, mask_url
from callout_server.upstream import metrics
from callout_server.upstream.ewma import FailureShare, PeakEwma
from callout_server.upstream.slots import Slots

State = Literal["healthy", "cooling_down", "probing"]
STATES: tuple[State, ...] = ("healthy", "cooling_down", "probing")
# Answers whose latency ops read (the last one and the median): the peak-EWMA the balancer
# weighs decays toward zero while an endpoint is idle, which is not what anyone observed.
RECENT_ANSWERS = 50


@dataclass(frozen=True, slots=True)
class Drain:
    """An endpoint taken out of service by hand: who did it, and when (epoch seconds)."""

    by: str | None
    at: float


# Cool-downs in a row past this many double the backoff no more (any base has reached any
# cap long before). A dead endpoint gets the calls that have nowhere else to go, each one
# a cool-down more, so the count runs into the thousands within minutes; unbounded, 2.0 ** n
# overflowed past 1,024 and every later failure raised instead of answering.
MAX_DOUBLINGS = 32


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    failure_threshold: int = 3  # endpoint faults in a row before a cool-down
    # First requests overtaken by their hedge, in a row, before a cool-down: higher than the
    # fault threshold, since a healthy replica loses now and then (that is what hedging is for).
    hedge_loss_threshold: int = 5
    base_cooldown_s: float = 1.0  # first cool-down; doubled for each failed probe
    max_cooldown_s: float = 8.0  # a replica that comes back takes traffic within this
    decay_s: float = 10.0  # peak-EWMA time constant
    default_latency_s: float = 0.05  # an endpoint not yet heard from
    failure_penalty_s: float = 1.0  # a failure counts as at least this slow


class EndpointState:
    """Mutable, owned by the event loop of its worker; `Pool` and `Upstreams` drive it."""

    def __init__(self, config_key: str, config_id: int | None, base_url: str, weight: float,
                 policy: HealthPolicy) -> None:
        self.config_key = config_key
        self.config_id = config_id
        self.base_url = base_url
        self.shown_url = mask_url(base_url)
        self.weight = weight
        self.policy = policy
        self.cfg: LLMConfig | None = None  # the configuration pointed at this URL
        self.in_flight = 0
        # The base URL's slots, shared with every configuration naming it (slots.py); None:
        # this state's own count against the pool's cap (a Pool built without Upstreams).
        self.slots: Slots | None = None
        # Start times of the requests in flight, oldest first (dicts keep insertion order):
        # a request still unanswered is a latency sample too, and grows with every draw.
        self._started: dict[int, float] = {}
        self._tokens = 0
        self.latency = PeakEwma(policy.decay_s, policy.default_latency_s)
        self.failure_share = FailureShare()
        self.consecutive_failures = 0
        self.hedge_losses = 0  # first requests overtaken by their hedge, in a row
        self.ejections = 0  # cool-downs in a row (backoff exponent)
        self.cooling = False
        self.cooldown_until = 0.0  # time.monotonic()
        self.probe_in_flight = False
        # Shared health (shared_health.py): another worker probes it, or the lease is being
        # asked for; and the hook told of each cool-down (True) and return (False).
        self.probe_held = False
        self.on_health: Callable[[EndpointState, bool], None] | None = None
        self.last_error: Diagnostic | None = None
        self.drain: Drain | None = None
        self._answers: deque[float] = deque(maxlen=RECENT_ANSWERS)  # seconds, newest last
        self.last_answered_at: float | None = None  # time.time()
        labels = (config_key, self.shown_url)
        self._requests = metrics.REQUESTS.labels(*labels)
        self._latency = metrics.LATENCY.labels(*labels)
        self._hedges = metrics.HEDGES.labels(*labels)
        metrics.IN_FLIGHT.labels(*labels).set_function(lambda: self.in_flight)
        for state in STATES:
            metrics.STATE.labels(*labels, state).set_function(
                lambda s=state: 1.0 if self.state() == s else 0.0)

    def retire(self) -> None:
        """No longer configured: its series leave /metrics (counters included)."""
        labels = (self.config_key, self.shown_url)
        for metric in (metrics.REQUESTS, metrics.LATENCY, metrics.HEDGES, metrics.IN_FLIGHT):
            try:
                metric.remove(*labels)
            except KeyError:
                pass
        for state in STATES:
            try:
                metrics.STATE.remove(*labels, state)
            except KeyError:
                pass
        for code in [k[2] for k in list(metrics.FAILURES._metrics) if k[:2] == labels]:
            metrics.FAILURES.remove(*labels, code)

    def __repr__(self) -> str:
        return f"<EndpointState {self.config_key} {self.shown_url} {self.state()}>"

    # -- what the balancer reads ---------------------------------------------------------
    def state(self, now: float | None = None) -> State:
        if not self.cooling:
            return "healthy"
        now = time.monotonic() if now is None else now
        return "cooling_down" if now < self.cooldown_until else "probing"

    def probe_due(self, now: float) -> bool:
        return (self.cooling and now >= self.cooldown_until and not self.probe_in_flight
                and not self.probe_held)

    def has_room(self, max_in_flight: int | None) -> bool:
        """Whether a new request may go here now (never while drained)."""
        if self.drain is not None:
            return False
        if self.slots is not None:
            return self.slots.has_room()
        return max_in_flight is None or self.in_flight < max_in_flight

    def cost(self, now: float) -> float:
        """Latency x (in flight + 1) / weight, lower is better. Latency is the peak-EWMA, or
        the age of the oldest request still unanswered when that is more; an endpoint never
        heard from and idle costs nothing, so a new replica gets its first call at once."""
        if self._started:
            latency = max(self.latency.current(now), now - next(iter(self._started.values())))
        elif not self.latency.sampled:
            return 0.0
        else:
            latency = self.latency.current(now)
        return latency * (self.in_flight + 1) / self.weight

    # -- one request's life --------------------------------------------------------------
    @property
    def begun(self) -> int:
        """Requests begun here so far (each `begin()` numbers its token by it)."""
        return self._tokens

    def begin(self, *, probe: bool, hedge: bool = False) -> int:
        """Count a request in flight; returns the token `end()` takes."""
        self.in_flight += 1
        if self.slots is not None:
            self.slots.taken()
        self._tokens += 1
        self._started[self._tokens] = time.monotonic()
        if probe:
            self.probe_in_flight = True
        self._requests.inc()
        if hedge:
            self._hedges.inc()
        return self._tokens

    def end(self, token: int, *, probe: bool) -> None:
        self.in_flight -= 1
        self._started.pop(token, None)
        if probe:
            self.probe_in_flight = False
        if self.slots is not None:
            self.slots.freed()

    def answered(self, latency_s: float, now: float) -> None:
        """The endpoint answered (a usable answer, or a refusal that is the request's fault)."""
        self.latency.observe(latency_s, now)
        self._latency.observe(latency_s)
        self._answers.append(latency_s)
        self.last_answered_at = time.time()
        self.failure_share.add(False)
        self.consecutive_failures = 0
        self.hedge_losses = 0
        if self.cooling:  # the probe (or a last-resort call) got through: back in service
            self.cooling = False
            self.ejections = 0
            if self.on_health is not None:
                self.on_health(self, False)

    def failed(self, error: LLMCallError, elapsed_s: float, now: float) -> None:
        """A call failed. Counted against the endpoint only when it is the endpoint's fault."""
        if not error.endpoint_fault:
            self.answered(elapsed_s, now)
            return
        d = error.diagnostic
        self.last_error = d
        code = f"{d.code}:{d.status}" if d.status else d.code
        metrics.FAILURES.labels(self.config_key, self.shown_url, code).inc()
        self.failure_share.add(True)
        self.latency.raise_to(max(elapsed_s, self.policy.failure_penalty_s), now)
        self.consecutive_failures += 1
        at_once = d.code == "connect_error" or error.retry_after_s is not None
        if self.cooling or at_once or self.consecutive_failures >= self.policy.failure_threshold:
            self._cool_down(now, error.retry_after_s)

    def lost_hedge(self, error: LLMCallError, elapsed_s: float, now: float) -> None:
        """The first request of a call, overtaken by its hedge: slow, maybe stalled. Cooled
        down after `hedge_loss_threshold` in a row (a replica that always needs the hedge)."""
        self.latency.raise_to(elapsed_s, now)
        self.hedge_losses += 1
        if self.hedge_losses >= self.policy.hedge_loss_threshold:
            self.hedge_losses = 0
            self.last_error = error.diagnostic
            metrics.FAILURES.labels(self.config_key, self.shown_url, "timeout").inc()
            self.failure_share.add(True)
            self._cool_down(now, None)

    def abandoned(self, elapsed_s: float, now: float) -> None:
        """Cancelled before an answer (the caller's deadline, a hedge that won elsewhere):
        no verdict on health, but the endpoint was at least this slow."""
        self.latency.raise_to(elapsed_s, now)

    def _cool_down(self, now: float, retry_after_s: float | None) -> None:
        p = self.policy
        doublings = min(self.ejections, MAX_DOUBLINGS)
        backoff = min(p.base_cooldown_s * 2.0 ** doublings, p.max_cooldown_s)
        self.ejections = doublings + 1
        self.cooling = True
        self.consecutive_failures = 0
        self.hedge_losses = 0
        self.cooldown_until = now + max(backoff, retry_after_s or 0.0)
        if self.on_health is not None:
            self.on_health(self, True)

    # -- what ops see --------------------------------------------------------------------
    def view(self, now: float | None = None) -> dict[str, Any]:
        """The live state; `last_error` is the `Diagnostic` itself (code and numbers)."""
        now = time.monotonic() if now is None else now
        state = self.state(now)
        until = None
        if state == "cooling_down":
            until = time.time() + (self.cooldown_until - now)
        answers = self._answers
        return {
            "config_id": self.config_id,
            "config": self.config_key,
            "config_name": self.cfg.name if self.cfg is not None else None,
            "tier": self.cfg.tier if self.cfg is not None else None,
            "base_url": self.shown_url,
            "weight": self.weight,
            "state": state,
            "in_flight": self.in_flight,
            "latency_ms": round(self.latency.current(now) * 1000, 1)
            if self.latency.sampled else None,
            "last_latency_ms": round(answers[-1] * 1000, 1) if answers else None,
            "median_latency_ms": round(statistics.median(answers) * 1000, 1) if answers else None,
            "last_answered_at": self.last_answered_at,
            "error_rate": round(self.failure_share.value, 4),
            "cooldown_until": until,
            # Worded by the reader (connectivity/upstreams.py), in the reader's language: the
            # call that failed was somebody else's.
            "last_error": self.last_error,
            "drained": self.drain is not None,
            "drained_by": self.drain.by if self.drain else None,
            "drained_at": self.drain.at if self.drain else None,
        }
