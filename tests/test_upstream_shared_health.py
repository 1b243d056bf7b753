"""Endpoint health shared by the workers through real Redis: a cool-down heard by all within a
second, one worker probes (the lease) while the others wait for its verdict, a worker that
starts later catches up, and an unreachable Redis leaves each worker to its own view.

Several `Upstreams` in this process stand for the workers (each with its own channel, as each
process has); the two-process test on the real app is in test_upstream_workers.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from callout_server.config.health_bus import RedisHealthChannel
from callout_server.llm import (
    RETRY_AFTER_MAX_S,
    Diagnostic,
    Endpoint,
    LLMCallError,
    LLMClient,
    LLMConfig,
)
from callout_server.upstream import HealthNotice, HealthPolicy, Upstreams
from callout_server.upstream.endpoint import MAX_DOUBLINGS, EndpointState
from callout_server.upstream.shared_health import MAX_HEARD, endpoint_id
from tests.fixtures.app import free_port

FAST = HealthPolicy(base_cooldown_s=0.3, max_cooldown_s=2.0)
CFG = LLMConfig(tier="nlu", name="pool", base_url="http://gpu-1.internal/v1", model="m", id=41,
                endpoints=(Endpoint("http://gpu-2.internal/v1"),))


def _connect_error() -> LLMCallError:
    return LLMCallError(Diagnostic.make("connect_error", "en"))


def _503() -> LLMCallError:
    return LLMCallError(Diagnostic.make("upstream_error", "en", status=503))


async def wait_until(cond: Callable[[], bool], timeout_s: float = 5.0) -> float:
    started = time.monotonic()
    while not cond():
        assert time.monotonic() - started < timeout_s, "condition not reached in time"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


class Worker:
    def __init__(self, ups: Upstreams, channel: RedisHealthChannel) -> None:
        self.ups, self.channel = ups, channel

    def dead(self) -> EndpointState:  # gpu-1, the one the tests kill
        return self.ups.pool(CFG).endpoints[0]


@pytest.fixture
async def workers(redis_url: str, redis_prefix: str) -> AsyncIterator[Callable[..., Any]]:
    started: list[Worker] = []

    async def start(url: str = redis_url, *, ready: bool = True) -> Worker:
        ups = Upstreams(LLMClient(), policy=FAST)
        channel = RedisHealthChannel(url, redis_prefix)
        await channel.start(ups.share_health(channel).receive)
        worker = Worker(ups, channel)
        started.append(worker)
        if ready:
            await wait_until(lambda: channel.available)
        return worker

    yield start
    for w in started:
        assert w.ups.shared is not None
        await w.ups.shared.aclose()
        await w.channel.stop()
        await w.ups.client.aclose()


async def test_a_cool_down_is_heard_by_every_worker_within_a_second(workers: Any) -> None:
    a, b = await workers(), await workers()
    b.ups.pool(CFG)  # b has served this pool already
    a.dead().failed(_connect_error(), 0.01, time.monotonic())
    assert a.dead().state() == "cooling_down"
    took = await wait_until(lambda: b.dead().state() == "cooling_down", 1.0)
    assert took < 1.0
    # b's draws avoid it from then on, with no call of its own to learn it.
    pool = b.ups.pool(CFG)
    picks = {pool.pick(time.monotonic(), b.ups.rng)[0] for _ in range(50)}  # type: ignore[index]
    assert picks == {pool.endpoints[1]}
    # A worker started after the cool-down reads it from Redis when it subscribes.
    c = await workers()
    assert c.dead().state() == "cooling_down"


async def test_one_worker_probes_and_the_others_wait_for_its_verdict(workers: Any) -> None:
    a, b, c = await workers(), await workers(), await workers()
    for w in (b, c):
        w.ups.pool(CFG)
    a.dead().failed(_connect_error(), 0.01, time.monotonic())
    await wait_until(lambda: b.dead().cooling and c.dead().cooling)

    def due(w: Worker) -> bool:
        return w.dead().probe_due(time.monotonic())

    def settled() -> Worker | None:
        """The one worker with the right to probe, once the others wait on its lease."""
        probers = [w for w in (a, b, c) if due(w)]
        if len(probers) != 1:
            return None
        waiting = all(w.dead().state() == "probing" and w.dead().probe_held
                      for w in (a, b, c) if w is not probers[0])
        return probers[0] if waiting else None

    # The cool-down ends: each worker may see it due for a moment, until they hear of the
    # one lease; then exactly one probes and the others wait for its verdict.
    await wait_until(lambda: settled() is not None, 3.0)
    prober = settled()
    assert prober is not None
    others = [w for w in (a, b, c) if w is not prober]

    # The probe fails: a longer cool-down, everywhere (the backoff exponent travels too).
    token = prober.dead().begin(probe=True)
    prober.dead().failed(_503(), 0.01, time.monotonic())
    prober.dead().end(token, probe=True)
    assert prober.dead().ejections == 2
    await wait_until(lambda: all(w.dead().state() == "cooling_down" for w in others))
    assert all(w.dead().ejections == 2 for w in others)

    # The next round: one prober again (its lease was released by its verdict); it answers,
    # and every worker takes the endpoint back.
    await wait_until(lambda: settled() is not None, 3.0)
    prober = settled()
    assert prober is not None
    token = prober.dead().begin(probe=True)
    prober.dead().answered(0.02, time.monotonic())
    prober.dead().end(token, probe=True)
    await wait_until(lambda: all(w.dead().state() == "healthy" for w in (a, b, c)))
    assert not any(w.dead().probe_held for w in (a, b, c))


async def test_a_prober_that_never_reports_hands_over_after_its_lease(workers: Any) -> None:
    a, b = await workers(), await workers()
    for w in (a, b):
        assert w.ups.shared is not None
        w.ups.shared.lease_s = 0.4
    b.ups.pool(CFG)
    a.dead().failed(_connect_error(), 0.01, time.monotonic())
    await wait_until(lambda: b.dead().cooling)
    await wait_until(lambda: a.dead().probe_due(time.monotonic())
                     or b.dead().probe_due(time.monotonic()), 3.0)
    first = a if a.dead().probe_due(time.monotonic()) else b
    other = b if first is a else a
    first.dead().probe_held = True  # as if its worker had died: it never probes nor reports
    assert first.ups.shared is not None
    await first.ups.shared.aclose()
    await first.channel.stop()
    await wait_until(lambda: other.dead().probe_due(time.monotonic()), 3.0)


async def test_an_unreachable_redis_leaves_each_worker_its_own_view(workers: Any) -> None:
    lone = await workers(f"redis://127.0.0.1:{free_port()}/0", ready=False)
    await asyncio.sleep(0.3)  # it tried to connect, and failed
    assert lone.channel.available is False
    dead = lone.dead()
    dead.failed(_connect_error(), 0.01, time.monotonic())
    assert dead.state() == "cooling_down" and not dead.probe_held  # no lease to wait for
    pool = lone.ups.pool(CFG)
    assert pool.pick(time.monotonic(), lone.ups.rng) == (pool.endpoints[1], False)
    await wait_until(lambda: dead.probe_due(time.monotonic()), 2.0)  # probes on its own
    assert pool.pick(time.monotonic(), lone.ups.rng) == (dead, True)
    assert await lone.channel.lease("x", 1.0) is None


async def test_a_peers_numbers_are_bounded_as_our_own(workers: Any) -> None:
    """Redis holds whatever any client wrote: a notice of an endless cool-down or of a
    billion ejections leaves the endpoint out for no longer than a Retry-After could, and
    its own next failure still computes a backoff (2.0 ** a billion overflowed)."""
    w = await workers()
    assert w.ups.shared is not None
    dead = w.dead()
    eid = endpoint_id(dead.config_key, dead.base_url)
    w.ups.shared.receive(HealthNotice("cooled", eid, "elsewhere:1", float("nan"), 3))
    assert dead.state() == "healthy"  # NaN: no verdict
    now = time.monotonic()
    w.ups.shared.receive(HealthNotice("cooled", eid, "elsewhere:1", float("inf"), 10**9))
    assert dead.state() == "cooling_down"
    assert now + RETRY_AFTER_MAX_S - 1 <= dead.cooldown_until \
        <= time.monotonic() + RETRY_AFTER_MAX_S
    assert dead.ejections <= MAX_DOUBLINGS
    dead.failed(_connect_error(), 0.01, dead.cooldown_until)
    assert dead.cooldown_until <= time.monotonic() + RETRY_AFTER_MAX_S + FAST.max_cooldown_s


async def test_a_bad_entry_in_redis_does_not_turn_sharing_off(workers: Any, redis_url: str,
                                                               redis_prefix: str) -> None:
    """`"ejections": 1e400` (JSON's infinity) made int() raise OverflowError: on the channel
    it dropped the subscription, in the hash of cool-downs every worker's catch-up on
    subscribing, so no worker starting or reconnecting shared health again."""
    import redis.asyncio as aioredis

    r = aioredis.from_url(redis_url)
    try:
        bad = '{"until": %f, "origin": "elsewhere:1", "ejections": 1e400}' % (time.time() + 60)
        await r.hset(f"{redis_prefix}:upstream-cooled", "abc", bad)
        w = await workers()  # waits until its channel is available
        await r.publish(f"{redis_prefix}:upstream-health",
                        b'{"kind": "cooled", "endpoint": "abc", "origin": "x:1", "ejections": 1e400}')
        other = await workers()
        dead = other.dead()
        dead.failed(_connect_error(), 0.01, time.monotonic())
        await wait_until(lambda: w.dead().state() == "cooling_down")  # still listening
        assert w.channel.available
    finally:
        await r.aclose()


async def test_cool_downs_heard_for_endpoints_never_built_are_bounded(workers: Any) -> None:
    w = await workers()
    assert w.ups.shared is not None
    for i in range(3 * MAX_HEARD):
        w.ups.shared.receive(HealthNotice("cooled", f"elsewhere-{i}", "x:1", 0.0 if i % 2 else 60.0))
    assert len(w.ups.shared._heard) <= MAX_HEARD
    dead = w.dead()  # one this worker has: applied as ever
    w.ups.shared.receive(HealthNotice("cooled", endpoint_id(dead.config_key, dead.base_url),
                                      "x:1", 30.0))
    assert dead.state() == "cooling_down"


async def test_a_dead_endpoint_cooled_by_every_call_is_told_of_once_a_second(
        workers: Any) -> None:
    """Every call with nowhere else to go cools a dead endpoint again; telling the others of
    each one was a Redis round trip and a timer per peer per call, at the dialers' rate."""
    w = await workers()
    sent: list[HealthNotice] = []
    publish = w.channel.publish
    w.channel.publish = lambda n: (sent.append(n), publish(n))[1]  # type: ignore[method-assign]
    dead = w.dead()
    now = time.monotonic()
    for i in range(300):  # three seconds of failed calls, one every 10 ms
        dead.failed(_connect_error(), 0.01, now + i / 100)
    cooled = [n for n in sent if n.kind == "cooled"]
    assert 2 <= len(cooled) <= 5, len(cooled)
    dead.answered(0.02, now + 3.1)  # back: the next cool-down is news at once
    dead.failed(_connect_error(), 0.01, now + 3.2)
    assert [n.kind for n in sent[-2:]] == ["healthy", "cooled"]


async def test_a_storm_of_notices_is_one_warning_not_one_per_notice(
        caplog: pytest.LogCaptureFixture, redis_prefix: str) -> None:
    channel = RedisHealthChannel("redis://127.0.0.1:1/0", redis_prefix)
    channel._subscribed = True  # as if subscribed, its writer not draining the queue
    with caplog.at_level(logging.WARNING, "callout_server.config.health_bus"):
        for i in range(3000):
            channel.publish(HealthNotice("cooled", f"e{i}", "me:1", 1.0))
    lines = [r for r in caplog.records if "backing up" in r.getMessage()]
    assert len(lines) == 1 and channel.dropped == 3000 - 1024


def test_a_notice_travels_as_json_and_a_bad_one_is_dropped() -> None:
    n = HealthNotice("cooled", "abc", "host:1", 1.5, 2)
    assert HealthNotice.from_json(n.to_json()) == n
    for bad in (b"", b"{}", b'{"kind": "dead", "endpoint": "a", "origin": "o"}', b"[1]",
                b'{"kind": "cooled", "endpoint": "a", "origin": "o", "cooldown_s": "x"}',
                b'{"kind": "cooled", "endpoint": "a", "origin": "o", "ejections": 1e400}'):
        assert HealthNotice.from_json(bad) is None
    assert "gpu" not in n.to_json()  # an endpoint travels as a hash
