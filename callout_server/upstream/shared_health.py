"""Endpoint health shared by every worker, through a channel the composition root wires.

    shared = upstreams.share_health(channel)      # channel: a HealthChannel (Redis, in config/)
    channel delivers the other workers' notices:  shared.receive(notice)

What travels is a verdict, never a call: "this endpoint is cooling down for N s" (with its
backoff exponent) and "this endpoint answers again". An endpoint is a pool's endpoint, as on
one worker (the configuration's key and its base URL), named by a hash: no URL, model or key
leaves the worker. A notice heard is applied to the endpoint's state in memory, so every
worker's balancer skips an endpoint one of them found dead, within the channel's latency.

One worker probes. When a cool-down ends (one found here or one heard), the endpoint stays
out of this worker's draws (`EndpointState.probe_held`) while it asks for the endpoint's
probe lease (Redis: SET NX PX). The winner lets its next call there be the probe, as one
worker alone does; the others wait for its verdict, which ends the round (a failed probe is
a new, longer cool-down heard by all; an answer puts the endpoint back everywhere). No
verdict within the lease (the winner died, or had no call to probe with): they ask again.

The channel down (or unset): no gate, no notice; each worker goes by its own view, as before.
The hot path pays nothing: a call reads the flags in memory; the channel is only touched when
an endpoint's health changes (a cool-down, a return), and then without waiting (`publish`
queues the notice).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from callout_server.llm import RETRY_AFTER_MAX_S
from callout_server.upstream.endpoint import MAX_DOUBLINGS, EndpointState

log = logging.getLogger(__name__)

NoticeKind = Literal["cooled", "healthy"]
# How long one worker holds the right to probe an endpoint before the others ask again: a
# probe is one call (an NLU decision, a stream's first token), well within this.
PROBE_LEASE_S = 3.0


def endpoint_id(config_key: str, base_url: str) -> str:
    """The name an endpoint travels under: a hash of its pool and URL (no URL goes out)."""
    raw = f"{config_key}\n{base_url.rstrip('/')}".encode()
    return hashlib.sha256(raw).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class HealthNotice:
    """One worker's verdict on one endpoint. `cooldown_s`: left of the cool-down, from the
    moment it was sent (durations travel, not clock readings: workers' clocks differ)."""

    kind: NoticeKind
    endpoint: str  # endpoint_id()
    origin: str  # the worker that found it (its own notices come back to it: ignored)
    cooldown_s: float = 0.0
    ejections: int = 0

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "endpoint": self.endpoint, "origin": self.origin,
                           "cooldown_s": round(self.cooldown_s, 3),
                           "ejections": self.ejections})

    @classmethod
    def from_json(cls, data: bytes | str) -> HealthNotice | None:
        """None for anything malformed (a notice is advice: a bad one is dropped)."""
        try:
            raw: Any = json.loads(data)
            kind = raw["kind"]
            if kind not in ("cooled", "healthy"):
                return None
            return cls(kind, str(raw["endpoint"]), str(raw["origin"]),
                       max(float(raw.get("cooldown_s", 0.0)), 0.0),
                       max(int(raw.get("ejections", 0)), 0))
        except (ValueError, KeyError, TypeError, OverflowError):  # 1e400: int(inf)
            return None


class HealthChannel(Protocol):
    """What upstream sees of the cluster: the composition root passes one in (Redis)."""

    origin: str  # this worker's name on the channel

    @property
    def available(self) -> bool:
        """Connected and subscribed: notices go out and come in, leases can be asked."""
        ...

    def publish(self, notice: HealthNotice) -> None:
        """Send without waiting (queued; dropped when the channel is down)."""
        ...

    async def lease(self, endpoint: str, ttl_s: float) -> bool | None:
        """Take the endpoint's probe lease for `ttl_s`: True (ours), False (another
        worker's), None (the channel could not tell: decide alone)."""
        ...


# Cool-downs heard for endpoints this worker has no state for (a peer's evaluation
# candidates, configurations it never called), kept until their end or its own state.
MAX_HEARD = 1024
# How far a cool-down's end must move before the others are told again (see `_changed`).
NOTICE_STEP_S = 1.0


class SharedHealth:
    """Applies the cluster's verdicts to this worker's endpoint states, and sends its own."""

    def __init__(self, states: Callable[[], Iterable[EndpointState]], channel: HealthChannel,
                 *, lease_s: float = PROBE_LEASE_S) -> None:
        self._states = states
        self.channel = channel
        self.lease_s = lease_s
        # Cool-downs heard for endpoints this worker has no state for yet (a pool not built):
        # endpoint id -> (monotonic end, ejections), applied when the state is made.
        self._heard: dict[str, tuple[float, int]] = {}
        # This worker's endpoints cooling down: endpoint id -> the end it last told of.
        self._told: dict[str, float] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"<SharedHealth gated={len(self._timers)}>"

    # -- states ----------------------------------------------------------------------------
    def attach(self, state: EndpointState) -> None:
        """A new endpoint state: its changes are told, what was heard about it applies."""
        state.on_health = self._changed
        heard = self._heard.pop(endpoint_id(state.config_key, state.base_url), None)
        if heard is not None and heard[0] > time.monotonic():
            _adopt_cooldown(state, heard[0], heard[1])
            self._gate(endpoint_id(state.config_key, state.base_url), heard[0])

    def _find(self, eid: str) -> list[EndpointState]:
        return [s for s in self._states() if endpoint_id(s.config_key, s.base_url) == eid]

    # -- this worker's verdicts ------------------------------------------------------------
    def _changed(self, state: EndpointState, cooled: bool) -> None:
        """Called by the state itself: it just cooled down, or just answered again."""
        eid = endpoint_id(state.config_key, state.base_url)
        if not self.channel.available:
            state.probe_held = False
            return
        if cooled:
            # A dead endpoint is cooled again by every call that had nowhere else to go (at
            # the dialers' rate): while the cool-down told of is in force, the others hear
            # again when its end moves by a step, not at every call. A new round (a failed
            # probe, the told end passed) is always news.
            told = self._told.get(eid, -math.inf)
            if time.monotonic() >= told or state.cooldown_until - told >= NOTICE_STEP_S:
                self._told[eid] = state.cooldown_until
                left = max(state.cooldown_until - time.monotonic(), 0.0)
                self.channel.publish(HealthNotice("cooled", eid, self.channel.origin, left,
                                                  state.ejections))
            self._gate(eid, state.cooldown_until)
        else:
            self._told.pop(eid, None)
            self._ungate(eid)
            self.channel.publish(HealthNotice("healthy", eid, self.channel.origin))

    # -- the others' -----------------------------------------------------------------------
    def receive(self, notice: HealthNotice) -> None:
        """A notice from the channel (its own included: ignored)."""
        if notice.origin == self.channel.origin:
            return
        states = self._find(notice.endpoint)
        now = time.monotonic()
        if notice.kind == "healthy":
            self._heard.pop(notice.endpoint, None)
            self._told.pop(notice.endpoint, None)  # a cool-down found next is news again
            self._ungate(notice.endpoint)
            for state in states:
                if state.cooling:
                    state.cooling = False
                    state.ejections = 0
                    state.consecutive_failures = 0
            return
        if notice.cooldown_s != notice.cooldown_s:  # NaN: no verdict
            return
        # A peer's numbers are bounded as this worker's own are (Redis holds whatever any
        # client wrote there): no longer than a Retry-After may make a cool-down.
        until = now + min(max(notice.cooldown_s, 0.0), RETRY_AFTER_MAX_S)
        ejections = min(notice.ejections, MAX_DOUBLINGS)
        if not states:
            if len(self._heard) >= MAX_HEARD:  # endpoints this worker never builds: bounded
                self._heard = {e: h for e, h in self._heard.items() if h[0] > now}
                if len(self._heard) >= MAX_HEARD:
                    return
            self._heard[notice.endpoint] = (until, ejections)
            return
        for state in states:
            _adopt_cooldown(state, until, ejections)
        self._gate(notice.endpoint, max(s.cooldown_until for s in states))

    # -- the probe lease ---------------------------------------------------------------------
    def _gate(self, eid: str, at: float) -> None:
        """Hold the endpoint out of the draws past `at` until the lease is decided."""
        for state in self._find(eid):
            state.probe_held = True
        old = self._timers.pop(eid, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[eid] = loop.call_at(max(at, loop.time()), self._ask, eid)

    def _ungate(self, eid: str) -> None:
        timer = self._timers.pop(eid, None)
        if timer is not None:
            timer.cancel()
        for state in self._find(eid):
            state.probe_held = False

    def _ask(self, eid: str) -> None:
        self._timers.pop(eid, None)
        task = asyncio.get_running_loop().create_task(self._ask_lease(eid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ask_lease(self, eid: str) -> None:
        won: bool | None = None
        try:
            if self.channel.available and any(s.cooling for s in self._find(eid)):
                won = await self.channel.lease(eid, self.lease_s)
        except Exception:  # the channel's own failure: decide alone
            log.debug("probe lease for an endpoint failed", exc_info=True)
            won = None
        finally:
            if won is False and any(s.cooling for s in self._find(eid)):
                # Another worker probes: wait for its verdict, or ask again after its lease.
                loop = asyncio.get_running_loop()
                self._timers[eid] = loop.call_at(loop.time() + self.lease_s, self._ask, eid)
            else:
                for state in self._find(eid):
                    state.probe_held = False

    async def aclose(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2.0)
        for state in self._states():
            state.probe_held = False
            state.on_health = None


def _adopt_cooldown(state: EndpointState, until: float, ejections: int) -> None:
    """Another worker's cool-down, taken as this worker's own (the longer one wins)."""
    if state.cooling and state.cooldown_until >= until:
        return
    state.cooling = True
    state.cooldown_until = until
    state.ejections = max(state.ejections, ejections)
    state.consecutive_failures = 0
    state.hedge_losses = 0
