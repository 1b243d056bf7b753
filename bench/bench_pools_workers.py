"""Scenario 5 of bench_pools.py: two workers, one dead replica, health shared through Redis.

    .venv/bin/python bench/bench_pools.py --only 5 [--seconds 12] [--redis redis://...]

Two workers (each its own `Upstreams`, NLU service and Redis connections, as each `serve`
process has; here in one process so one clock times both) call one pool: a healthy replica
(20 ms) and one answering 503. Worker A drives traffic from the start; worker B starts the
moment A has cooled the dead replica down (100 ms later). Counted on B: requests that
reached the dead replica apart from probes (what it pays to learn what A knew), in the
first second after A's cool-down and after it, and probes; on both: probes
per cool-down round, and the cool-downs the workers found themselves. Variants side by side: each worker its own view (before), shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from callout_server.config.health_bus import RedisHealthChannel
from callout_server.llm import LLMClient
from callout_server.tiers.nlu.service import NluService
from callout_server.upstream import Route, Upstreams
from callout_server.upstream.endpoint import EndpointState

# Worker B starts this long after A's first cool-down.
B_AFTER_S = 0.1
HEADER = (f"{'variant':<28} {'B heard, ms':>13} {'B: hits, first 1 s':>19} {'B: hits after 1 s':>18} "
          f"{'B: probes':>10} {'A+B probes':>11} {'cool-downs':>11} {'B answered':>11}")


class Hits:
    """Requests begun on one endpoint state: (seconds since the run's start, is a probe)."""

    def __init__(self, state: EndpointState, t0: float) -> None:
        self.items: list[tuple[float, bool]] = []
        begin = state.begin

        def counted(*, probe: bool, hedge: bool = False) -> int:
            self.items.append((time.perf_counter() - t0, probe))
            return begin(probe=probe, hedge=hedge)

        state.begin = counted  # type: ignore[method-assign]


async def heard_after(state: EndpointState, since: float) -> float | None:
    """Milliseconds from `since` until `state` (worker B's) is cooling, checked every ms."""
    for _ in range(5000):
        if state.cooling:
            return (time.perf_counter() - since) * 1000
        await asyncio.sleep(0.001)
    return None


def count_cool_downs(state: EndpointState, sink: list[float], t0: float,
                     first: asyncio.Event) -> None:
    """Cool-downs this worker found itself (a notice heard is not one)."""
    cool = state._cool_down

    def counted(now: float, retry_after_s: float | None) -> None:
        sink.append(time.perf_counter() - t0)
        first.set()
        cool(now, retry_after_s)

    state._cool_down = counted  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def worker(client: LLMClient, redis_url: str | None, prefix: str
                 ) -> AsyncIterator[Upstreams]:
    ups = Upstreams(client)
    channel = None
    if redis_url:
        channel = RedisHealthChannel(redis_url, prefix)
        await channel.start(ups.share_health(channel).receive)
        for _ in range(200):
            if channel.available:
                break
            await asyncio.sleep(0.01)
    try:
        yield ups
    finally:
        if channel is not None and ups.shared is not None:
            await ups.shared.aclose()
            await channel.stop()


async def one_variant(name: str, url: str, client: LLMClient, redis_url: str | None,
                      seconds: float, in_flight: int, bench: Any) -> str:
    model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
    bench.script(url, model, "dead", {"status": 503})
    bench.script(url, model, None, {"ttft_ms": 20})
    route = Route(bench.cfg(model, [f"{url}/r/ok/vllm/v1", f"{url}/r/dead/vllm/v1"], 1))
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    async with worker(client, redis_url, prefix) as a, worker(client, redis_url, prefix) as b:
        t0 = time.perf_counter()
        dead_a, dead_b = a.pool(route.primary).endpoints[1], b.pool(route.primary).endpoints[1]
        hits_a, hits_b = Hits(dead_a, t0), Hits(dead_b, t0)
        cooled_a: list[float] = []
        cooled_b: list[float] = []
        a_found, b_found = asyncio.Event(), asyncio.Event()
        for state, sink, found in ((dead_a, cooled_a, a_found), (dead_b, cooled_b, b_found)):
            count_cool_downs(state, sink, t0, found)
        records_a, records_b = bench.Records(), bench.Records()
        svc_a = NluService(a, lambda: route, records_a)
        svc_b = NluService(b, lambda: route, records_b)
        stop = t0 + seconds
        answered_b: list[bool] = []

        async def traffic(svc: NluService, answered: list[bool] | None) -> None:
            while time.perf_counter() < stop:
                decision = await svc.decide(bench.request(uuid.uuid4().hex))
                if answered is not None:
                    answered.append(not decision.fallback)

        a_tasks = [asyncio.ensure_future(traffic(svc_a, None)) for _ in range(in_flight)]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(a_found.wait(), seconds)
        a_cooled = time.perf_counter() - t0
        heard = asyncio.ensure_future(heard_after(dead_b, a_cooled + t0))
        # B joins once A knows, as a worker already running would between two of its calls.
        await asyncio.sleep(B_AFTER_S)
        await asyncio.gather(*a_tasks, *(traffic(svc_b, answered_b) for _ in range(in_flight)))
    heard_ms = heard.result() if heard.done() else None
    heard.cancel()
    first = sum(1 for t, p in hits_b.items if not p and t < a_cooled + 1.0)
    after = sum(1 for t, p in hits_b.items if not p and t >= a_cooled + 1.0)
    probes_b = sum(1 for _, p in hits_b.items if p)
    probes = probes_b + sum(1 for _, p in hits_a.items if p)
    share = 100 * sum(answered_b) / len(answered_b) if answered_b else float("nan")
    shown = "-" if heard_ms is None or redis_url is None else f"{heard_ms:.0f}"
    return (f"{name:<28} {shown:>13} {first:>19} {after:>18} {probes_b:>10} {probes:>11} "
            f"{len(cooled_a) + len(cooled_b):>11} {share:>10.2f} %")


async def scenario_5(url: str, client: LLMClient, seconds: float, in_flight: int,
                     redis_url: str | None, bench: Any) -> None:
    redis_url = redis_url or os.environ.get("CALLOUT_REDIS_URL") or "redis://127.0.0.1:6379/0"
    print(f"\n5. two workers, one pool: a healthy replica (20 ms) and one answering 503; B "
          f"starts 0.1 s after A cooled it down; {in_flight} in flight each, {seconds:.0f} s")
    print(HEADER)
    for name, redis in (("each worker its own view", None), ("shared through Redis", redis_url)):
        print(await one_variant(name, url, client, redis, seconds, in_flight, bench))
