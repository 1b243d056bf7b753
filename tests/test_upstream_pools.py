"""Upstream pools against the real emulator process: balancing, passive health, failover to
replicas and fallback configurations, hedging, the in-flight cap, streams, metrics.

Replicas are paths of the one emulator (`/r/<name>/vllm/v1`, scripted per replica); a dead
replica is a port nothing listens on; a replica that comes back is an emulator app started
on that port during the test.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import generate_latest

from callout_server.emulator import build_app
from callout_server.llm import Endpoint, LLMCallError, LLMClient, LLMConfig, LLMRequest, TextDelta
from callout_server.upstream import HealthPolicy, Route, UpstreamError, Upstreams

REQ = LLMRequest(messages=[{"role": "user", "content": "您好"}], default_thinking=False)
FAST = HealthPolicy(base_cooldown_s=0.3, max_cooldown_s=0.6)


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[LLMClient]:
    c = LLMClient(locale="en")
    yield c
    await c.aclose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pool_cfg(model: str, urls: list[str], *, cid: int | None = 1, **kw: Any) -> LLMConfig:
    return LLMConfig(tier="nlu", name=f"pool-{cid}", base_url=urls[0], model=model, id=cid,
                     endpoints=tuple(Endpoint(u) for u in urls[1:]), timeout_s=10.0,
                     max_tokens=50, **kw)


async def wait_until(cond: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


def replicas_hit(requests: list[dict[str, Any]]) -> Counter[str]:
    return Counter(r["replica"] for r in requests)


def state_of(ups: Upstreams, url: str) -> dict[str, Any]:
    shown = url.rstrip("/")
    (view,) = [v for v in ups.views() if v["base_url"] == shown]
    return view


async def test_slow_replica_stops_getting_traffic_without_any_error(emulator: Any,
                                                                    client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "slow", {"ttft_ms": 600})
    urls = [emulator.replica_url(r) for r in ("a", "b", "slow")]
    ups = Upstreams(client)
    route = Route(pool_cfg(model, urls))
    for _ in range(40):
        served = await ups.complete(route, REQ)
        assert served.attempts == 1
    hits = replicas_hit(await emulator.requests(model))
    assert sum(hits.values()) == 40
    assert hits["slow"] <= 3, hits  # a few calls learn it; then the draws avoid it
    assert state_of(ups, urls[2])["state"] == "healthy"  # slow is not unhealthy


async def test_refused_replica_fails_over_and_cools_down(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    ups = Upstreams(client)
    # The dead replica weighs most: the balancer tries it first, then must leave it alone.
    cfg = LLMConfig(tier="nlu", name="p", base_url=emulator.replica_url("a"), model=model, id=1,
                    endpoints=(Endpoint(dead, weight=1000),), max_tokens=50)
    attempts = [(await ups.complete(Route(cfg), REQ)).attempts for _ in range(20)]
    assert attempts[0] == 2 and attempts.count(2) <= 2  # (a probe if the machine is slow)
    view = state_of(ups, dead)
    assert view["last_error"].code == "connect_error"
    assert view["state"] in ("cooling_down", "probing")
    assert replicas_hit(await emulator.requests(model))["a"] == 20


async def test_replica_that_comes_back_is_probed_then_healthy(emulator: Any,
                                                              client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    port = free_port()
    back = f"http://127.0.0.1:{port}/v1"
    ups = Upstreams(client, policy=FAST)
    route = Route(pool_cfg(model, [back, emulator.replica_url("a")]))
    ups.views([route])  # configured, not yet called: listed as healthy
    while state_of(ups, back)["state"] == "healthy":
        await ups.complete(route, REQ)
    runner = web.AppRunner(build_app(), handler_cancellation=True)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        # Calls keep going; the cool-down ends, one call probes, the replica takes traffic.
        deadline = time.monotonic() + 10
        while (await ups.complete(route, REQ)).endpoint != back:
            assert time.monotonic() < deadline, "the replica never came back"
        assert state_of(ups, back)["state"] == "healthy"
    finally:
        await runner.cleanup()


async def test_5xx_counts_and_cools_down_after_the_threshold(emulator: Any,
                                                             client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "bad", {"status": 503})
    bad = emulator.replica_url("bad")
    # A cool-down no busy machine outlasts before the state is read (the default is 1 s).
    ups = Upstreams(client, policy=HealthPolicy(base_cooldown_s=30.0, max_cooldown_s=30.0))
    route = Route(pool_cfg(model, [bad]), (pool_cfg(fb_model, [emulator.replica_url("f")],
                                                    cid=2),))
    for _ in range(6):
        assert (await ups.complete(route, REQ)).config.id == 2
    assert replicas_hit(await emulator.requests(model))["bad"] == 3  # then cooled down
    assert state_of(ups, bad)["state"] == "cooling_down"
    assert state_of(ups, bad)["error_rate"] > 0


async def test_failing_replica_loses_the_draws_at_once(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "bad", {"status": 503})
    urls = [emulator.replica_url("bad"), emulator.replica_url("good")]
    ups = Upstreams(client)
    for _ in range(30):
        assert (await ups.complete(Route(pool_cfg(model, urls)), REQ)).endpoint == urls[1]
    assert replicas_hit(await emulator.requests(model))["bad"] <= 3


async def test_429_retry_after_is_honoured(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "limited", {"status": 429, "headers": {"Retry-After": "30"}})
    url = emulator.replica_url("limited")
    ups = Upstreams(client)
    route = Route(pool_cfg(model, [url]), (pool_cfg(model, [emulator.replica_url("ok")], cid=2),))
    assert (await ups.complete(route, REQ)).attempts == 2
    view = state_of(ups, url)
    assert view["state"] == "cooling_down"
    assert view["cooldown_until"] - time.time() > 25  # the vendor's 30 s, not the 1 s backoff


async def test_a_retry_after_date_past_any_calendar_still_fails_over(emulator: Any,
                                                                    client: LLMClient) -> None:
    """An HTTP date with a 20-digit year made the date parser raise OverflowError out of the
    client: no failover, the replica never cooled, and (never slow) it won every draw."""
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "odd", {"status": 503, "headers": {
        "Retry-After": "Mon, 01 Jan 99999999999999999999 00:00:00 GMT"}})
    odd, ok = emulator.replica_url("odd"), emulator.replica_url("ok")
    ups = Upstreams(client)
    route = Route(pool_cfg(model, [odd, ok]))
    for _ in range(6):
        assert (await ups.complete(route, REQ)).value.text
    assert state_of(ups, odd)["state"] in ("cooling_down", "probing")


async def test_request_fault_is_not_retried_elsewhere(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"status": 400})
    primary = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")])
    fallback = pool_cfg(fb_model, [emulator.replica_url("c")], cid=2)
    ups = Upstreams(client)
    with pytest.raises(UpstreamError) as err:
        await ups.complete(Route(primary, (fallback,)), REQ)
    assert err.value.diagnostic.status == 400 and err.value.attempts == 1
    assert await emulator.requests(fb_model) == []
    assert all(v["state"] == "healthy" for v in ups.views())


async def test_every_replica_down_goes_to_the_fallback(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"status": 502})
    primary = pool_cfg(model, [emulator.replica_url("a"), f"http://127.0.0.1:{free_port()}/v1"])
    fallback = pool_cfg(fb_model, [emulator.replica_url("f")], cid=7)
    ups = Upstreams(client)
    route = Route(primary, (fallback,))
    for _ in range(10):
        served = await ups.complete(route, REQ)
        assert served.config is fallback and served.config.id == 7
        assert served.value.model == fb_model
    first = await ups.complete(route, REQ)
    assert first.attempts >= 1


async def test_fallback_answer_names_attempts(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"status": 503})
    primary = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")])
    fallback = pool_cfg(fb_model, [emulator.replica_url("f")], cid=8)
    served = await Upstreams(client).complete(Route(primary, (fallback,)), REQ)
    assert served.config.id == 8 and served.attempts == 3


async def test_all_failing_raises_with_the_last_configuration(emulator: Any,
                                                              client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"status": 500})
    ups = Upstreams(client)
    with pytest.raises(UpstreamError) as err:
        await ups.complete(Route(pool_cfg(model, [emulator.replica_url("a"),
                                                  emulator.replica_url("b")])), REQ)
    assert err.value.code == "upstream_error" and err.value.attempts == 3  # a, b, once more
    assert err.value.config.id == 1 and err.value.endpoint is not None


async def test_hedge_to_the_other_replica_wins_and_the_loser_is_closed(
        emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"ttft_ms": 3000}, times=1)  # the first held
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")],
                   hedge_after_ms=100)
    started = time.perf_counter()
    served = await ups.complete(Route(cfg), REQ)
    assert time.perf_counter() - started < 1.5
    assert served.attempts == 2
    await wait_until(lambda: False if not emulator.requests_sync(model) else any(
        r["disconnected"] for r in emulator.requests_sync(model)))
    held, fast = sorted(await emulator.requests(model), key=lambda r: r["seq"])
    assert held["disconnected"] and not fast["disconnected"]
    assert held["replica"] != fast["replica"]
    assert 'callout_upstream_hedges_total{config="1"' in generate_latest().decode()


async def test_hedge_goes_to_the_first_fallback_when_there_is_no_other_replica(
        emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"hang": True})
    primary = pool_cfg(model, [emulator.replica_url("a")], hedge_after_ms=80)
    fallback = pool_cfg(fb_model, [emulator.replica_url("f")], cid=9)
    served = await Upstreams(client).complete(Route(primary, (fallback,)), REQ)
    assert served.config.id == 9 and served.attempts == 2
    await wait_until(lambda: emulator.requests_sync(model)[0]["disconnected"])


async def test_deadline_cancels_every_attempt(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"hang": True})
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")],
                   hedge_after_ms=50)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.4):
            await ups.complete(Route(cfg), REQ, deadline_s=0.4)
    await wait_until(lambda: len(emulator.requests_sync(model)) == 2 and all(
        r["disconnected"] for r in emulator.requests_sync(model)))
    # Cut short by the caller: slow, but not a failure of the endpoints.
    assert all(v["state"] == "healthy" and v["in_flight"] == 0 for v in ups.views())


async def test_max_in_flight_queues_within_the_deadline(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"ttft_ms": 200})
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("a")], max_in_flight=1)
    results = await asyncio.gather(*(ups.complete(Route(cfg), REQ, deadline_s=5)
                                     for _ in range(3)))
    assert all(r.attempts == 1 for r in results)
    seen = sorted(await emulator.requests(model), key=lambda r: r["received_at"])
    for earlier, later in itertools.pairwise(seen):
        assert later["received_at"] >= earlier["finished_at"] - 0.01  # one at a time


async def test_full_pool_moves_to_the_fallback_after_half_the_budget(emulator: Any,
                                                                     client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    fb_model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"ttft_ms": 2000})
    ups = Upstreams(client)
    primary = pool_cfg(model, [emulator.replica_url("a")], max_in_flight=1)
    fallback = pool_cfg(fb_model, [emulator.replica_url("f")], cid=3)
    route = Route(primary, (fallback,))
    slow = asyncio.ensure_future(ups.complete(route, REQ, deadline_s=5))
    await wait_until(lambda: len(emulator.requests_sync(model)) == 1)
    served = await ups.complete(route, REQ, deadline_s=1.0)
    assert served.config.id == 3
    slow.cancel()


async def test_stream_fails_over_before_the_first_event(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"status": 503}, times=1)
    await emulator.script_replica(model, None, {"content": "好的。我们马上处理。"})
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")])
    async with ups.stream(Route(cfg), REQ, ttft_timeout_s=5) as stream:
        text = "".join([e.text async for e in stream if isinstance(e, TextDelta)])
    assert text == "好的。我们马上处理。"
    assert stream.attempts == 2 and stream.endpoint is not None
    assert stream.text == text and stream.usage is not None
    assert all(v["in_flight"] == 0 for v in ups.views())


async def test_stream_does_not_fail_over_after_the_first_event(emulator: Any,
                                                               client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"content": "一二三四五六七八九十", "chunks":
                                                ["一二", "三四", "五六", "七八", "九十"],
                                                "disconnect_after": 3})
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("a"), emulator.replica_url("b")])
    got: list[str] = []
    with pytest.raises(LLMCallError):
        async with ups.stream(Route(cfg), REQ, ttft_timeout_s=5) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    got.append(event.text)
    assert got and len(await emulator.requests(model)) == 1  # nothing said twice


async def test_metrics_per_endpoint_without_credentials(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "b", {"status": 500})
    ups = Upstreams(client)
    cfg = pool_cfg(model, [emulator.replica_url("b")], cid=4242,
                   api_key="sk-secret-0123456789abcdef")
    fallback = pool_cfg(model, [emulator.replica_url("a")], cid=4243)
    for _ in range(6):
        await ups.complete(Route(cfg, (fallback,)), REQ)
    text = generate_latest().decode()
    shown = emulator.replica_url("b")
    assert f'callout_upstream_requests_total{{config="4242",endpoint="{shown}"}}' in text
    assert (f'callout_upstream_failures_total{{code="upstream_error:500",config="4242",'
            f'endpoint="{shown}"}}') in text
    assert f'callout_upstream_state{{config="4242",endpoint="{shown}",state="' in text
    assert "sk-secret" not in text


async def test_a_replica_slower_than_the_deadline_is_cooled_down(emulator: Any,
                                                                 client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "slow", {"ttft_ms": 5000})
    slow = emulator.replica_url("slow")
    ups = Upstreams(client)
    route = Route(pool_cfg(model, [slow]))
    # Built beforehand, as every snapshot's are: the outer timeout and the call's deadline
    # start within the 5 ms slack (a first pool's allocations can meet a full GC there).
    ups.prepare([route])
    for _ in range(3):  # cut by the caller's deadline: a first-byte timeout each time
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await ups.complete(route, REQ, deadline_s=0.2)
    # The cancelled requests settle in the background, just after the caller's timeout.
    await wait_until(lambda: state_of(ups, slow)["state"] == "cooling_down")
    view = state_of(ups, slow)
    assert "deadline" in view["last_error"].message_in("en")


async def test_a_replica_that_always_needs_the_hedge_is_cooled_down(emulator: Any,
                                                                    client: LLMClient) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, "slow", {"ttft_ms": 3000})
    slow, fast = emulator.replica_url("slow"), emulator.replica_url("fast")
    ups = Upstreams(client)
    # The slow replica weighs most: the balancer keeps trying it first until it is cooled.
    cfg = LLMConfig(tier="nlu", name="p", base_url=fast, model=model, id=1, max_tokens=50,
                    endpoints=(Endpoint(slow, weight=1000),), hedge_after_ms=50)
    for _ in range(8):
        assert (await ups.complete(Route(cfg), REQ)).endpoint == fast
    await wait_until(lambda: state_of(ups, slow)["state"] == "cooling_down")
    assert "hedge" in state_of(ups, slow)["last_error"].message_in("en")


async def test_a_route_keeps_its_pools_until_a_configuration_is_saved_again() -> None:
    """A call takes its route's pools in one lookup; a new snapshot's configuration (same
    key) gets a new pool, and the old route's next call gets what `pool()` gives then."""
    async with LLMClient() as client:
        ups = Upstreams(client)
        old = LLMConfig(tier="nlu", name="a", base_url="http://127.0.0.1:9/v1", model="m", id=5)
        fallback = LLMConfig(tier="nlu", name="f", base_url="http://127.0.0.1:8/v1", model="m",
                             id=6)
        route = Route(old, (fallback,))
        pools = ups.call(route).pools
        assert ups.call(route).pools is pools
        assert pools == [ups.pool(old), ups.pool(fallback)]
        new = LLMConfig(tier="nlu", name="b", base_url="http://127.0.0.1:9/v1", model="m", id=5)
        newer = Route(new, (fallback,))
        assert ups.call(newer).pools[0].cfg is new
        assert ups.call(route).pools == [ups.pool(old), ups.pool(fallback)]
        assert ups.call(route).pools[0].cfg is old
        # Two configurations of one route sharing a key: never kept, each call asks pool().
        twin = Route(LLMConfig(tier="nlu", name="c", base_url="http://127.0.0.1:7/v1", model="m"),
                     (LLMConfig(tier="nlu", name="d", base_url="http://127.0.0.1:6/v1",
                                model="m"),))
        first = ups.call(twin).pools
        assert ups.call(twin).pools is not first
