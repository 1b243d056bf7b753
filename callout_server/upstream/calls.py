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
import time
from typing import TYPE_CHECKING

from callout_server.llm import Diagnostic, LLMCallError, LLMConfig, LLMRequest
from callout_server.llm.client import Completion
from callout_server.upstream.endpoint import EndpointState
from callout_server.upstream.pool import Pool
from callout_server.upstream.route import Route, Served, UpstreamError

if TYPE_CHECKING:
    from callout_server.upstream.registry import Upstreams

# A probe while other endpoints could still answer gets at most this share of what is left,
# so a replica that came back hanging cannot eat the caller's whole deadline.
PROBE_SHARE = 0.5
# A call cancelled with this little of its deadline left was cut by the deadline.
DEADLINE_SLACK_S = 0.005


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
        # cancellation at the caller's deadline is seen by `Call.expired()`; a hedge that
        # lost, or a caller gone away, says nothing about the endpoint.
        self.cut: str | None = None
        # Counted at once: a concurrent call choosing next sees it taken.
        self.token = endpoint.begin(probe=probe, hedge=hedge)

    def end(self) -> None:
        self.endpoint.end(self.token, probe=self.probe)
        self.pool.released()


class Call:
    """The attempts of one call. `deadline` is on the loop clock (None: no overall limit)."""

    def __init__(self, upstreams: Upstreams, route: Route, deadline: float | None) -> None:
        self.upstreams = upstreams
        self.route = route
        self.deadline = deadline
        self.pools = [upstreams.pool(cfg) for cfg in route.chain]
        self.tried: list[EndpointState] = []
        self.attempts = 0
        self.last: Target | None = None
        self._second_chance = False

    def remaining(self) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - asyncio.get_running_loop().time()

    # -- choosing ------------------------------------------------------------------------
    def pick_now(self, *, hedge: bool = False) -> Target | None:
        """The next endpoint that can take the call at once, or None."""
        now = time.monotonic()
        rng = self.upstreams.rng
        pools = self.pools[:2] if hedge else self.pools  # a hedge: a replica, else fallback 1
        for pool in pools:
            picked = pool.pick(now, rng, self.tried)
            if picked is not None:
                return self._take(pool, *picked, hedge=hedge)
        return None

    async def next_target(self, after: LLMCallError | None = None) -> Target | None:
        """The next endpoint for a (failed-over) attempt; may wait for a free slot.

        `after`: the failure that moves the call on (None for the first attempt)."""
        now = time.monotonic()
        rng = self.upstreams.rng
        for i, pool in enumerate(self.pools):
            while True:
                picked = pool.pick(now, rng, self.tried)
                if picked is not None:
                    return self._take(pool, *picked)
                if not pool.full(self.tried):
                    break
                left = self.remaining()
                budget = pool.cfg.timeout_s if left is None else left
                if i + 1 < len(self.pools):
                    budget /= 2
                if not await pool.wait_for_slot(budget):
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
        return await complete(self, req)

    def where(self) -> tuple[LLMConfig, str | None]:
        """The configuration and endpoint of the latest attempt (the primary before any)."""
        last = self.last
        if last is None:
            return self.route.primary, None
        return last.pool.cfg, last.endpoint.shown_url

    def _take(self, pool: Pool, ep: EndpointState, probe: bool, *, hedge: bool = False
              ) -> Target:
        self.tried.append(ep)
        self.attempts += 1
        target = Target(pool, ep, probe, hedge)
        self.last = target
        return target

    # -- reporting -----------------------------------------------------------------------
    def served(self, value: object, target: Target) -> Served:  # type: ignore[type-arg]
        return Served(value, target.pool.cfg, target.endpoint.shown_url, self.attempts)

    def failure(self, error: LLMCallError | None, target: Target | None) -> UpstreamError:
        target = target or self.last
        if error is None:
            limit = self.route.primary.max_in_flight
            error = LLMCallError(Diagnostic.make(
                "timeout", self.upstreams.locale,
                reason="pool_busy", args={"limit": limit}))
        cfg: LLMConfig = target.pool.cfg if target else self.route.primary
        return UpstreamError(error, cfg, target.endpoint.shown_url if target else None,
                             self.attempts)

    def expired(self) -> bool:
        """The caller's deadline has passed (a cancellation now is the deadline's)."""
        left = self.remaining()
        return left is not None and left <= DEADLINE_SLACK_S

    def probe_limit(self) -> float | None:
        """Seconds a probe may take: a share of what is left when others could answer."""
        left = self.remaining()
        if left is None:
            return None
        return max(left * PROBE_SHARE, 0.0)


async def complete(call: Call, req: LLMRequest) -> Served[Completion]:
    """One answer over the route; raises UpstreamError when there is none."""
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
    upstreams = call.upstreams
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
            upstreams.hold(task)


def _cut_error(call: Call, cut: str, elapsed_s: float) -> LLMCallError:
    return LLMCallError(Diagnostic.make(
        "timeout", call.upstreams.locale, reason=f"cut_{cut}",
        args={"seconds": round(elapsed_s, 2)}))


async def _attempt(call: Call, target: Target, req: LLMRequest) -> Completion:
    ep = target.endpoint
    assert ep.cfg is not None
    started = time.perf_counter()
    limit = call.probe_limit() if target.probe and len(call.tried) < _candidates(call) else None
    try:
        if limit is not None:
            try:
                async with asyncio.timeout(limit):
                    return await _complete(call, target, req, started)
            except TimeoutError as exc:
                error = LLMCallError(Diagnostic.make(
                    "timeout", call.upstreams.locale,
                    reason="probe_timeout", args={"seconds": round(limit, 2)}))
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
        result = await call.upstreams.client.complete(ep.cfg, req)
    except LLMCallError as exc:
        ep.failed(exc, time.perf_counter() - started, time.monotonic())
        raise
    except asyncio.CancelledError:
        elapsed = time.perf_counter() - started
        if target.cut == "hedge":
            ep.lost_hedge(_cut_error(call, "hedge", elapsed), elapsed, time.monotonic())
        elif call.expired():
            ep.failed(_cut_error(call, "deadline", elapsed), elapsed, time.monotonic())
        else:
            ep.abandoned(elapsed, time.monotonic())
        raise
    ep.answered(time.perf_counter() - started, time.monotonic())
    return result


def _candidates(call: Call) -> int:
    return sum(len(pool.endpoints) for pool in call.pools)
