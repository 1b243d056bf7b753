"""A configuration that leaves service (deactivated, deleted, replaced on the same URL; a
try-out, an evaluation or a canary's candidate that ended) releases its cap on the shared
base URL with the first snapshot that does not name it, and its pool, endpoint states and
metric series go once idle through a snapshot; a call in flight on it finishes and frees
its slot.

A worker here is what services.py wires: a `ConfigStore` whose listener hands each
snapshot's routes to `Upstreams.prepare`, and the `GET /api/admin/upstreams` service over
both. The model is a client whose answers wait for a gate: calls stay in flight exactly as
long as a test needs, no I/O.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from prometheus_client import generate_latest

from callout_server.config.snapshot import ActiveTier, ConfigSnapshot, ConfigStore
from callout_server.connectivity.upstreams import UpstreamHealth, UpstreamOut
from callout_server.llm import Completion, LLMConfig, LLMRequest, Usage
from callout_server.upstream import Route, Upstreams
from callout_server.upstream.slots import Slots

REQ = LLMRequest(messages=[{"role": "user", "content": "您好"}], default_thinking=False)
URL = "http://gpu-retired.internal/v1"
OTHER = "http://gpu-retired-other.internal/v1"


class GatedClient:
    """Stands for `LLMClient`: each answer waits until `gate` is set."""

    locale = "en"

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = 0

    async def complete(self, cfg: LLMConfig, req: LLMRequest) -> Completion:
        self.started += 1
        await self.gate.wait()
        return Completion(text="ok", reasoning="", tool_calls=[], usage=Usage(),
                          finish_reason="stop", latency_ms=1.0, model=cfg.model,
                          dialect="openai", thinking=False, max_tokens=50)


class Worker:
    def __init__(self) -> None:
        self.client = GatedClient()
        self.ups = Upstreams(self.client)  # type: ignore[arg-type]  # complete() is enough
        self.store = ConfigStore(_snapshot(0), self._no_database)
        self.ups.prepare(self.store.current.routes())  # as services.py does at start
        self.store.add_listener(lambda snapshot: self.ups.prepare(snapshot.routes()))
        self.health = UpstreamHealth(self.ups, self.store)

    @staticmethod
    async def _no_database() -> ConfigSnapshot:
        raise AssertionError("no reload from a database here")

    def serve(self, *cfgs: LLMConfig) -> Route:
        """A new snapshot serving `cfgs` (fresh values, as every reload builds them)."""
        fresh = [dataclasses.replace(c) for c in cfgs]
        self.store.swap(_snapshot(self.store.current.generation + 1, *fresh))
        return self.store.current.route_for("nlu")

    def items(self) -> dict[str, UpstreamOut]:
        return {i.config: i for i in self.health.items().items}

    def slots(self, url: str = URL) -> Slots:
        return self.ups._slots[url]

    def holds(self, key: str) -> bool:
        return key in self.ups._pools or any(k[0] == key for k in self.ups._states)


def _snapshot(generation: int, *cfgs: LLMConfig) -> ConfigSnapshot:
    return ConfigSnapshot(generation=generation, tiers=MappingProxyType(
        {c.tier: ActiveTier(source="db", config=c) for c in cfgs}))


def _cfg(cid: int, cap: int | None, url: str = URL, tier: str = "nlu") -> LLMConfig:
    return LLMConfig(tier=tier, name=f"cfg-{cid}", base_url=url, model="m", id=cid,
                     timeout_s=10.0, max_tokens=50, max_in_flight=cap)


def _series(key: str) -> bool:
    return f'config="{key}"' in generate_latest().decode()


async def wait_until(cond: Callable[[], bool], timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


async def _answered(w: Worker, route: Route | LLMConfig) -> None:
    w.client.gate.set()
    assert (await w.ups.complete(route, REQ, deadline_s=5)).value.text == "ok"
    w.client.gate.clear()


@pytest.mark.timeout(10)
async def test_a_configuration_replaced_on_the_same_url_leaves_its_cap_behind() -> None:
    w = Worker()
    await _answered(w, w.serve(_cfg(91001, cap=2)))  # config 1 serves a while
    route = w.serve(_cfg(91002, cap=64))  # then config 2 replaces it on the same URL
    slots = w.slots()
    assert slots.caps == {"91002": 64} and slots.limit == 64
    calls = [asyncio.ensure_future(w.ups.complete(route, REQ, deadline_s=8))
             for _ in range(10)]
    # All ten at the server at once: config 1's cap of 2 no longer holds config 2 back.
    await wait_until(lambda: w.client.started == 1 + 10)
    assert (slots.in_flight, slots.waiting) == (10, 0)
    w.client.gate.set()
    assert [s.value.text for s in await asyncio.gather(*calls)] == ["ok"] * 10
    assert slots.in_flight == 0


@pytest.mark.timeout(10)
async def test_a_retired_configuration_leaves_the_health_view_and_the_metrics() -> None:
    w = Worker()
    w.serve(_cfg(91011, cap=4))
    await _answered(w, w.serve(_cfg(91012, cap=8)))  # 91011 never called: 91012 serves
    assert not w.holds("91011") and "91011" not in w.items()  # idle: gone at once
    w.serve(_cfg(91013, cap=None, url=OTHER))  # 91012, just called, is replaced
    # What was observed of it stays readable through this snapshot (role: none).
    item = w.items()["91012"]
    assert item.role is None and item.last_latency_ms is not None and _series("91012")
    assert "91012" not in w.ups._pools and w.slots().caps == {}  # its cap went at once
    w.serve(_cfg(91013, cap=None, url=OTHER))  # any later snapshot, it idle through it
    assert set(w.items()) == {"91013"}
    assert not w.holds("91012") and not _series("91012")
    assert URL not in w.ups._slots  # nothing names the URL now, nothing is in flight there


@pytest.mark.timeout(10)
async def test_a_call_in_flight_on_a_retired_configuration_finishes_and_frees_its_slot() -> None:
    w = Worker()
    old = w.serve(_cfg(91021, cap=1))
    first = asyncio.ensure_future(w.ups.complete(old, REQ, deadline_s=8))
    await wait_until(lambda: w.client.started == 1)
    new = w.serve(_cfg(91022, cap=64))
    w.serve(_cfg(91022, cap=64))  # a second snapshot: still in flight, so still kept
    slots = w.slots()
    assert slots.limit == 64 and slots.in_flight == 1
    assert w.items()["91021"].in_flight == 1 and w.items()["91021"].role is None
    second = asyncio.ensure_future(w.ups.complete(new, REQ, deadline_s=8))
    await wait_until(lambda: w.client.started == 2)  # beside it, not behind its cap of 1
    w.client.gate.set()
    assert (await first).value.text == "ok" and (await second).value.text == "ok"
    assert slots.in_flight == 0 and slots.reserved == 0
    assert w.items()["91021"].in_flight == 0
    w.serve(_cfg(91022, cap=64))
    assert not w.holds("91021") and "91021" not in w.items() and not _series("91021")
    assert w.slots() is slots and slots.caps == {"91022": 64}


@pytest.mark.timeout(10)
async def test_a_configuration_outside_the_snapshot_keeps_its_cap_while_called() -> None:
    """A try-out of an inactive configuration (an evaluation, a canary's candidate: none is
    in a snapshot's routes) caps the URL while it is called, keeps what its endpoint learnt
    while it is in use, and goes once it idles through a snapshot."""
    w = Worker()
    w.serve(_cfg(91032, cap=64))
    tryout = _cfg(91033, cap=1)
    await _answered(w, Route(tryout))
    assert w.slots().limit == 1  # the smallest cap of the configurations calling the URL
    state = w.ups._states[("91033", URL)]
    w.serve(_cfg(91032, cap=64))  # an unrelated change
    assert w.slots().limit == 64 and w.items()["91033"].role is None
    await _answered(w, Route(tryout))  # called again: its cap is back, over the same state
    assert w.slots().limit == 1 and w.ups._states[("91033", URL)] is state
    w.serve(_cfg(91032, cap=64))
    assert w.holds("91033") and w.slots().limit == 64  # called since the last snapshot
    w.serve(_cfg(91032, cap=64))
    assert not w.holds("91033") and w.slots().caps == {"91032": 64}
    await _answered(w, Route(tryout))  # a later try-out starts afresh, capped again
    assert w.slots().limit == 1 and w.ups._states[("91033", URL)] is not state


def test_a_read_of_the_health_view_forgets_nothing() -> None:
    """`views()` (GET /api/admin/upstreams) only builds; retiring comes with snapshots."""
    ups = Upstreams(client=None)  # type: ignore[arg-type]  # no call is made
    called = _cfg(91041, cap=2)
    ups.pool(called)
    views: list[dict[str, Any]] = ups.views([_cfg(91042, cap=None, url=OTHER)])
    assert {v["config"] for v in views} == {"91041", "91042"}
    assert ups._slots[URL].limit == 2
