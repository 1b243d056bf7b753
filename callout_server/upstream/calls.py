"""One call over a route: which endpoint next, failover, hedging, within the deadline.

Order of attempts: the primary configuration's endpoints (balanced, see pool.py), then each
fallback configuration's in turn. A failure that is the endpoint's fault moves the call on;
any other failure is the answer. When every endpoint of a configuration is at
`max_in_flight`, the call waits for a slot (half of what is left when fallbacks remain, all
of it otherwise) before moving on. When nothing anywhere is healthy, the primary endpoint
due back first is tried anyway (better than giving up without a try).

Hedging (non-streamed only, `hedge_after_ms` of the primary): with no answer after that
long, the same request goes to another replica, else the first fallback; the first usable
answer wins and the other request is cancelled, which closes its connection.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

from callout_server.llm import (
    Completion,
    Diagnostic,
    LLMCallError,
    LLMClient,
    LLMRequest,
    Locale,
    resolve_dialect,
    time_limit,
)
from callout_server.upstream.deadline import Deadline
from callout_server.upstream.endpoint import EndpointState
from callout_server.upstream.pool import Pool
from callout_server.upstream.report import CallReport
from callout_server.upstream.route import Route, Served, UpstreamError

# Keeps a cancelled request alive until it has closed its connection (`Upstreams.hold`).
Hold = Callable[["asyncio.Future[Any]"], None]


class Target:
    """One attempt: counted in flight on its endpoint from the moment it is chosen."""

    __slots__ = ("cut", "endpoint", "hedge", "pool", "probe", "token")

    def __init__(self, pool: Pool, endpoint: EndpointState, probe: bool, hedge: bool = False
                 ) -> None:
        self.pool = pool
        self.endpoint = endpoint
        self.probe = probe
        self.hedge = hedge
        # "hedge": the first request, overtaken by its hedge (slow here, maybe stalled). A
        # cancellation at the caller's deadline is seen by `Deadline.expired()`; a hedge that
        # lost, or a caller gone away, says nothing about the endpoint.
        self.cut: str | None = None
        # Counted at once: a concurrent call choosing next sees it taken.
        self.token = endpoint.begin(probe=probe, hedge=hedge)

    def end(self) -> None:
        self.endpoint.end(self.token, probe=self.probe)
        self.pool.released()


class Call:
    """The attempts of one call over `route`'s pools, within its `deadline`."""

    def __init__(self, route: Route, pools: list[Pool], client: LLMClient, *,
                 deadline: Deadline, rng: random.Random, hold: Hold,
                 started: float | None = None) -> None:
        self.route = route
        self.pools = pools
        self.client = client
        self.deadline = deadline
        self.rng = rng
        self.hold = hold
        self.started = time.perf_counter() if started is None else started
        self.tried: list[EndpointState] = []
        self.attempts = 0
        self.last: Target | None = None
        self._second_chance = False

    @property
    def locale(self) -> Locale:
        return self.client.locale

    # -- choosing ------------------------------------------------------------------------
    def pick_now(self, *, hedge: bool = False) -> Target | None:
        """The next endpoint that can take the call at once, or None."""
        now = time.monotonic()
        pools = self.pools[:2] if hedge else self.pools  # a hedge: a replica, else fallback 1
        for pool in pools:
            picked = pool.pick(now, self.rng, self.tried)
            if picked is not None:
                return self._take(pool, *picked, hedge=hedge)
        return None

    async def next_target(self, after: LLMCallError | None = None) -> Target | None:
        """The next endpoint for a (failed-over) attempt; may wait for a free slot.

        `after`: the failure that moves the call on (None for the first attempt)."""
        now = time.monotonic()
        for i, pool in enumerate(self.pools):
            while True:
                picked = pool.pick(now, self.rng, self.tried)
                if picked is not None:
                    return self._take(pool, *picked)
                if not pool.full(self.tried):
                    break
                left = self.deadline.remaining()
                budget = pool.cfg.timeout_s if left is None else left
                if i + 1 < len(self.pools):
                    budget /= 2
                if not await pool.wait_for_slot(budget, self.route.primary.tier):
                    break
                now = time.monotonic()
        if not self.attempts:
            ep = self.pools[0].last_resort(self.tried)
            if ep is not None:
                return self._take(self.pools[0], ep, False)
        elif not self._second_chance and after is not None and after.retryable:
            # Nowhere new to go: once per call, an endpoint that failed transiently (5xx, 429)
            # but is still in service gets the call again: a lone replica's passing 503.
            self._second_chance = True
            for pool in self.pools:
                for ep in pool.endpoints:
                    if not ep.cooling and ep.has_room(pool.max_in_flight):
                        return self._take(pool, ep, False)
        return None

    async def complete(self, req: LLMRequest) -> Served[Completion]:
        """One answer within the deadline; raises UpstreamError when there is none."""
        scope = self.deadline.scope()
        try:
            async with scope:
                return await complete(self, req)
        except TimeoutError as exc:
            if not scope.expired():
                raise
            cut = LLMCallError(self.deadline.exceeded(
                self.locale, req.max_tokens or self.route.primary.max_tokens))
            raise self.failure(cut, None) from exc

    def _take(self, pool: Pool, ep: EndpointState, probe: bool, *, hedge: bool = False
              ) -> Target:
        self.tried.append(ep)
        self.attempts += 1
        target = Target(pool, ep, probe, hedge)
        self.last = target
        return target

    # -- reporting -----------------------------------------------------------------------
    def report(self, diagnostic: Diagnostic | None, target: Target | None = None, *,
               completion: Completion | None = None) -> CallReport:
        """The call as it ended: at `target` (default the latest attempt), with `diagnostic`."""
        target = target or self.last
        cfg = target.pool.cfg if target is not None else self.route.primary
        latency_ms = (time.perf_counter() - self.started) * 1000
        endpoint = target.endpoint.shown_url if target is not None else None
        if completion is None:
            return CallReport(cfg, endpoint, self.attempts, resolve_dialect(cfg).name,
                              diagnostic, latency_ms, variant=self.route.variant)
        return CallReport(cfg, endpoint, self.attempts, completion.dialect, diagnostic,
                          latency_ms, completion.usage, completion.finish_reason,
                          completion.max_tokens, variant=self.route.variant)

    def served(self, value: Completion, target: Target) -> Served[Completion]:
        return Served(value, self.report(value.diagnostic, target, completion=value))

    def failure(self, error: LLMCallError | None, target: Target | None) -> UpstreamError:
        if error is None:
            limit = self.route.primary.max_in_flight
            error = LLMCallError(Diagnostic.make(
                "timeout", self.locale, reason="pool_busy", args={"limit": limit}))
        return UpstreamError(error, self.report(error.diagnostic, target))


async def complete(call: Call, req: LLMRequest) -> Served[Completion]:
    """One answer over the route, in turn or hedged (the deadline is the caller's scope)."""
    first = await call.next_target()
    if first is None:
        raise call.failure(None, None)
    if call.route.primary.hedge_after_ms is None:
        return await _one_at_a_time(call, first, req)
    return await _hedged(call, first, req, call.route.primary.hedge_after_ms / 1000)


async def _one_at_a_time(call: Call, target: Target, req: LLMRequest) -> Served[Completion]:
    """Attempts in turn, in the caller's task: no task or wait per call on the hot path."""
    error: LLMCallError | None = None
    error_target = target
    while True:
        try:
            return call.served(await _attempt(call, target, req), target)
        except LLMCallError as exc:
            if error is None or error.endpoint_fault:  # the request's own fault wins
                error, error_target = exc, target
            if not exc.endpoint_fault:
                raise call.failure(error, error_target) from exc
            nxt = await call.next_target(exc)
            if nxt is None:
                raise call.failure(error, error_target) from exc
            target = nxt


async def _hedged(call: Call, first: Target, req: LLMRequest, hedge_after_s: float
                  ) -> Served[Completion]:
    tasks: dict[asyncio.Task[Completion], Target] = {}

    def launch(target: Target) -> None:
        tasks[asyncio.ensure_future(_attempt(call, target, req))] = target

    launch(first)
    hedge_at: float | None = time.monotonic() + hedge_after_s
    error: LLMCallError | None = None
    error_target: Target | None = None
    racing = 1  # requests the call keeps going at once: 2 once it has hedged
    won = False
    try:
        while tasks:
            timeout = None if hedge_at is None else max(hedge_at - time.monotonic(), 0.0)
            done, _ = await asyncio.wait(tasks, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if not done:  # the hedge timer: one more request, elsewhere
                hedge_at = None
                extra = call.pick_now(hedge=True)
                if extra is not None:
                    racing = 2
                    launch(extra)
                continue
            for task in done:
                target = tasks.pop(task)
                exc = task.exception()
                if exc is None:
                    won = True
                    return call.served(task.result(), target)
                if not isinstance(exc, LLMCallError):
                    raise exc
                if error is None or error.endpoint_fault:  # the request's own fault wins
                    error, error_target = exc, target
                # A failed request is replaced (the hedge's too, while the first still runs).
                if exc.endpoint_fault and len(tasks) < racing:
                    nxt = await call.next_target(exc)
                    if nxt is not None:
                        launch(nxt)
        raise call.failure(error, error_target)
    finally:
        for task, target in tasks.items():  # the loser of a hedge, or everything on a deadline
            if won and not target.hedge:
                target.cut = "hedge"
            task.cancel()
            call.hold(task)


def _cut_error(call: Call, cut: str, elapsed_s: float) -> LLMCallError:
    return LLMCallError(Diagnostic.make(
        "timeout", call.locale, reason=f"cut_{cut}",
        args={"seconds": round(elapsed_s, 2)}))


async def _attempt(call: Call, target: Target, req: LLMRequest) -> Completion:
    ep = target.endpoint
    assert ep.cfg is not None
    started = time.perf_counter()
    probing = target.probe and len(call.tried) < _candidates(call)
    limit = call.deadline.probe_limit() if probing else None
    try:
        if limit is not None:
            try:
                async with time_limit(limit):
                    return await _complete(call, target, req, started)
            except TimeoutError as exc:
                error = LLMCallError(Diagnostic.make(
                    "timeout", call.locale, reason="probe_timeout",
                    args={"seconds": round(limit, 2)}))
                ep.failed(error, time.perf_counter() - started, time.monotonic())
                raise error from exc
        return await _complete(call, target, req, started)
    finally:
        target.end()


async def _complete(call: Call, target: Target, req: LLMRequest, started: float
                    ) -> Completion:
    ep = target.endpoint
    assert ep.cfg is not None
    try:
        result = await call.client.complete(ep.cfg, req)
    except LLMCallError as exc:
        ep.failed(exc, time.perf_counter() - started, time.monotonic())
        raise
    except asyncio.CancelledError:
        elapsed = time.perf_counter() - started
        if target.cut == "hedge":
            ep.lost_hedge(_cut_error(call, "hedge", elapsed), elapsed, time.monotonic())
        elif call.deadline.expired():
            ep.failed(_cut_error(call, "deadline", elapsed), elapsed, time.monotonic())
        else:
            ep.abandoned(elapsed, time.monotonic())
        raise
    ep.answered(time.perf_counter() - started, time.monotonic())
    return result


def _candidates(call: Call) -> int:
    return sum(len(pool.endpoints) for pool in call.pools)
