"""The pure parts of the pools: peak-EWMA, the power-of-two choice, cool-down backoff,
Retry-After. No I/O (the pools against real processes: test_upstream_pools.py)."""

from __future__ import annotations

import random
import time
from collections import Counter

from callout_server.llm import Diagnostic, LLMCallError, LLMConfig
from callout_server.llm.transport import parse_retry_after
from callout_server.upstream import HealthPolicy
from callout_server.upstream.endpoint import EndpointState
from callout_server.upstream.ewma import PeakEwma
from callout_server.upstream.pool import Pool


def _state(url: str, weight: float = 1.0, policy: HealthPolicy | None = None) -> EndpointState:
    return EndpointState(f"t-{url}", None, url, weight, policy or HealthPolicy())


def _error(code: str, status: int | None = None, retry_after: float | None = None) -> LLMCallError:
    return LLMCallError(Diagnostic.make(code, "en", status=status), retry_after_s=retry_after)


def test_peak_ewma_believes_slow_news_at_once_and_forgets_it_slowly() -> None:
    e = PeakEwma(decay_s=10.0, initial_s=0.05)
    e.observe(0.02, 0.0)
    e.observe(2.0, 1.0)
    assert e.current(1.0) == 2.0  # the peak, at once
    e.observe(0.02, 2.0)
    assert 1.5 < e.current(2.0) < 2.0  # one fast answer does not erase it
    assert e.current(40.0) < 0.1  # no traffic: it decays, so the endpoint is tried again


def test_power_of_two_choices_prefers_the_faster_and_honours_weights() -> None:
    now = time.monotonic()
    fast, slow = _state("http://a/v1"), _state("http://b/v1")
    fast.latency.observe(0.02, now)
    slow.latency.observe(1.0, now)
    cfg = LLMConfig(tier="nlu", name="p", base_url="http://a/v1", model="m")
    pool = Pool(cfg, [fast, slow])
    rng = random.Random(7)
    assert {pool.pick(now, rng)[0].base_url for _ in range(50)} == {"http://a/v1"}  # type: ignore[index]
    # Equal costs: the draw follows the weights.
    heavy, light = _state("http://c/v1", weight=3), _state("http://d/v1", weight=1)
    third = _state("http://e/v1", weight=1)
    pool = Pool(cfg, [heavy, light, third])
    picks = Counter(pool.pick(now, rng)[0].base_url for _ in range(3000))  # type: ignore[index]
    assert picks["http://c/v1"] > picks["http://d/v1"] * 1.5


def test_an_unanswered_request_makes_an_endpoint_look_slow() -> None:
    ep = _state("http://a/v1")
    assert ep.cost(time.monotonic()) == 0.0  # never heard from, idle: tried first
    token = ep.begin(probe=False)
    later = time.monotonic() + 2.0
    assert ep.cost(later) >= 2.0 * 2  # age of the oldest in flight x (in flight + 1)
    ep.end(token, probe=False)


def test_cool_down_backs_off_and_a_probe_answer_heals() -> None:
    policy = HealthPolicy(failure_threshold=3, base_cooldown_s=1.0, max_cooldown_s=8.0)
    ep = _state("http://a/v1", policy=policy)
    now = 100.0
    for _ in range(2):
        ep.failed(_error("upstream_error", 503), 0.01, now)
    assert ep.state(now) == "healthy"
    ep.failed(_error("upstream_error", 503), 0.01, now)
    assert ep.state(now) == "cooling_down" and ep.cooldown_until == now + 1.0
    assert ep.state(now + 1.0) == "probing" and ep.probe_due(now + 1.0)
    ep.failed(_error("connect_error"), 0.01, now + 1.0)  # the probe failed: twice as long
    assert ep.cooldown_until == now + 1.0 + 2.0
    ep.failed(_error("connect_error"), 0.01, now + 3.0)
    ep.failed(_error("connect_error"), 0.01, now + 7.0)
    ep.failed(_error("connect_error"), 0.01, now + 15.0)
    assert ep.cooldown_until == now + 15.0 + 8.0  # capped
    ep.answered(0.02, now + 23.0)
    assert ep.state(now + 23.0) == "healthy" and ep.ejections == 0


def test_an_endpoint_down_for_long_keeps_its_capped_cool_down() -> None:
    """Each failed call while cooling (a last-resort call: the pool has nowhere else to go,
    so at the dialers' rate) doubles the backoff once more; past 1,024 of them 2 ** n times
    a float overflowed, and every later failure raised OverflowError instead of an answer."""
    policy = HealthPolicy(base_cooldown_s=0.5, max_cooldown_s=8.0)
    ep = _state("http://a/v1", policy=policy)
    now = 100.0
    for i in range(3000):
        ep.failed(_error("connect_error"), 0.01, now)
        assert ep.cooldown_until == now + (0.5 * 2 ** i if i < 4 else 8.0)
    assert ep.state(now) == "cooling_down"
    ep.failed(_error("upstream_error", 429, retry_after=30.0), 0.01, now)
    assert ep.cooldown_until == now + 30.0  # Retry-After still wins over the cap
    ep.answered(0.02, now + 31.0)
    assert ep.state(now + 31.0) == "healthy" and ep.ejections == 0


def test_what_counts_against_an_endpoint() -> None:
    ep = _state("http://a/v1")
    for harmless in (_error("upstream_error", 400), _error("truncated"), _error("empty_output"),
                     _error("upstream_error", 404)):
        ep.failed(harmless, 0.01, 1.0)
    assert ep.state(1.0) == "healthy" and ep.last_error is None
    ep.failed(_error("connect_error"), 0.01, 1.0)  # refused: at once
    assert ep.state(1.0) == "cooling_down"
    limited = _state("http://b/v1")
    limited.failed(_error("upstream_error", 429, retry_after=30.0), 0.01, 1.0)
    assert limited.cooldown_until == 31.0  # the vendor's Retry-After, not the 1 s backoff


def test_retry_after_forms() -> None:
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("99999") == 300.0  # bounded
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("Mon, 01 Jan 99999999999999999999 00:00:00 GMT") is None
    assert parse_retry_after("1e400") == 300.0 and parse_retry_after("nan") is None


def test_an_endpoint_removed_from_the_configuration_is_forgotten() -> None:
    from prometheus_client import generate_latest

    from callout_server.upstream import Upstreams

    ups = Upstreams(client=None)  # type: ignore[arg-type]  # no call is made
    cfg = LLMConfig(tier="nlu", name="p", base_url="http://a/v1", model="m", id=9191,
                    endpoints=({"base_url": "http://gone/v1"},))  # type: ignore[arg-type]
    ups.pool(cfg)
    assert 'endpoint="http://gone/v1"' in generate_latest().decode()
    ups.pool(LLMConfig(tier="nlu", name="p", base_url="http://a/v1", model="m", id=9191))
    assert [v["base_url"] for v in ups.views()] == ["http://a/v1"]
    assert 'endpoint="http://gone/v1"' not in generate_latest().decode()
