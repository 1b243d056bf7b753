"""One endpoint, one set of slots: configurations naming the same base URL share its
`max_in_flight` on a worker (the smallest cap wins), and calls waiting for a slot take it
NLU first, then chat, then script generation (first come first served within a tier).

The queue on its own first (no I/O), then through `Upstreams` against the emulator.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from callout_server.llm import LLMClient, LLMConfig, LLMRequest
from callout_server.upstream import Route, Upstreams
from callout_server.upstream.slots import Slots, wait_for_slot


async def wait_until(cond: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def test_the_smallest_cap_of_the_configurations_naming_the_url_is_the_limit() -> None:
    s = Slots("http://gpu-1/v1")
    s.set_cap("7", None)
    assert s.limit is None and s.has_room()
    s.set_cap("9", 16)
    s.set_cap("file:nlu", 4)
    assert s.limit == 4
    s.drop_cap("file:nlu")
    assert s.limit == 16


async def test_a_freed_slot_goes_to_nlu_then_chat_then_script() -> None:
    s = Slots("http://gpu-1/v1")
    s.set_cap("7", 1)
    s.taken()  # the one slot is busy
    order: list[str] = []

    async def call(tier: str) -> None:
        assert await wait_for_slot([s], tier, 5.0)
        assert s.has_room()  # kept for this call until it runs
        s.taken()
        order.append(tier)
        await asyncio.sleep(0)
        s.freed()

    arrivals = ["script", "chat", "script", "nlu", "chat", "nlu"]
    tasks = []
    for i, tier in enumerate(arrivals):
        tasks.append(asyncio.ensure_future(call(tier)))
        await wait_until(lambda n=i + 1: s.waiting == n)
    s.freed()
    await asyncio.gather(*tasks)
    assert order == ["nlu", "nlu", "chat", "chat", "script", "script"]
    assert (s.in_flight, s.reserved, s.waiting) == (0, 0, 0)


async def test_a_slot_handed_over_is_kept_and_a_waiter_that_gives_up_passes_it_on() -> None:
    s = Slots("http://gpu-1/v1")
    s.set_cap("7", 1)
    s.taken()
    first = asyncio.ensure_future(wait_for_slot([s], "nlu", 5.0))
    second = asyncio.ensure_future(wait_for_slot([s], "chat", 5.0))
    await wait_until(lambda: s.waiting == 2)
    s.freed()  # handed to the waiting NLU call...
    assert not s.has_room()  # ...so a call arriving meanwhile finds no room
    assert await first is True
    assert not second.done()
    # It left the slot unused: the next waiter gets it once its caller yields.
    assert await second is True
    assert s.reserved == 0 and s.has_room()
    # A waiter that times out leaves nothing behind.
    s.taken()
    assert await wait_for_slot([s], "nlu", 0.05) is False
    assert (s.waiting, s.reserved) == (0, 0)
    s.freed()
    assert s.has_room()


# -- through the pools, against the emulator -----------------------------------------------

@pytest.fixture
async def ups() -> AsyncIterator[Upstreams]:
    client = LLMClient(locale="en")
    yield Upstreams(client)
    await client.aclose()


def _cfg(tier: str, cid: int, model: str, url: str, cap: int | None) -> LLMConfig:
    return LLMConfig(tier=tier, name=f"{tier}-{cid}", base_url=url, model=model, id=cid,
                     timeout_s=10.0, max_tokens=50, max_in_flight=cap)


def _req(text: str) -> LLMRequest:
    return LLMRequest(messages=[{"role": "user", "content": text}], default_thinking=False)


def _overlap(seen: list[dict[str, Any]]) -> int:
    """Most requests the emulator had at once (its clock stops a little after the client's
    slot is freed: 10 ms of slack)."""
    edges = sorted([(r["received_at"], 1) for r in seen]
                   + [(r["finished_at"] - 0.01, -1) for r in seen])
    return max(itertools.accumulate(d for _, d in edges))


async def test_configurations_of_several_tiers_share_the_urls_slots(
        emulator: Any, ups: Upstreams) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"ttft_ms": 150})
    url = emulator.replica_url("shared")
    nlu, chat, script = (_cfg("nlu", 71, model, url, None), _cfg("chat", 72, model, url, 2),
                         _cfg("script", 73, model, url, 8))
    ups.prepare([nlu, chat, script])  # as each configuration snapshot does
    calls = [ups.complete(Route(cfg), _req(cfg.tier), deadline_s=8)
             for cfg in (nlu, chat, script) for _ in range(3)]
    results = await asyncio.gather(*calls)
    assert all(r.attempts == 1 for r in results)
    seen = await emulator.requests(model)
    assert len(seen) == 9 and _overlap(seen) == 2  # chat's cap of 2 held for all three


async def test_under_contention_nlu_waits_least_and_script_longest(
        emulator: Any, ups: Upstreams) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script_replica(model, None, {"ttft_ms": 300}, times=1)  # the slot's holder
    await emulator.script_replica(model, None, {"ttft_ms": 20})
    url = emulator.replica_url("busy")
    cfgs = {t: _cfg(t, 80 + i, model, url, 1) for i, t in enumerate(("nlu", "chat", "script"))}
    slots = ups.pool(cfgs["nlu"]).endpoints[0].slots
    assert slots is not None and slots is ups.pool(cfgs["script"]).endpoints[0].slots

    holder = asyncio.ensure_future(ups.complete(Route(cfgs["script"]), _req("holder"),
                                                deadline_s=8))
    await wait_until(lambda: slots.in_flight == 1)
    waiting = []
    for i, tier in enumerate(["script", "chat", "nlu", "script", "chat", "nlu"]):
        waiting.append(asyncio.ensure_future(
            ups.complete(Route(cfgs[tier]), _req(f"{tier}-{i}"), deadline_s=8)))
        await wait_until(lambda n=i + 1: slots.waiting == n)
    await asyncio.gather(holder, *waiting)
    seen = sorted(await emulator.requests(model), key=lambda r: r["received_at"])
    order = [r["body"]["messages"][-1]["content"] for r in seen]
    assert order == ["holder", "nlu-2", "nlu-5", "chat-1", "chat-4", "script-0", "script-3"]
    assert _overlap(seen) == 1
    assert (slots.in_flight, slots.reserved, slots.waiting) == (0, 0, 0)
