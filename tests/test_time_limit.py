"""`time_limit`: asyncio.timeout's behaviour, one loop timer for all the limits of a loop.

Each scenario runs under `asyncio.timeout`, `time_limit` and `time_limit_at` (given the same
delay as a loop time), and must end the same way: the model calls' time limits (a call's
deadline, the client's total, a probe's) rely on exactly that.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
import uvloop

from callout_server.llm import TimeLimit, time_limit, time_limit_at
from callout_server.llm.timeouts import _timer


def _at(delay: float | None) -> TimeLimit:
    return time_limit_at(None if delay is None else asyncio.get_running_loop().time() + delay)


LIMITS = pytest.mark.parametrize("limit", [asyncio.timeout, time_limit, _at],
                                 ids=["asyncio", "time_limit", "time_limit_at"])
Limit = Callable[[float | None], Any]


async def _cut_after(limit: Limit, seconds: float, fired: list[object]) -> None:
    """Wait 30 s inside `limit(seconds)`; `seconds` goes into `fired` if the limit cut it."""
    try:
        async with limit(seconds):
            await asyncio.sleep(30)
    except TimeoutError:
        fired.append(seconds)


@LIMITS
async def test_a_block_that_ends_in_time_is_left_alone(limit: Limit) -> None:
    async with limit(5) as cm:
        await asyncio.sleep(0)
    assert not cm.expired()
    await asyncio.sleep(0.02)  # nothing fires later either: the task is not cancelled


@LIMITS
async def test_a_block_past_its_deadline_raises_timeout_error(limit: Limit) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with limit(0.05) as cm:
            await asyncio.sleep(30)
    assert cm.expired()
    assert 0.045 <= time.monotonic() - started < 10


@LIMITS
async def test_a_deadline_already_past_cuts_at_the_next_await(limit: Limit) -> None:
    with pytest.raises(TimeoutError):
        async with limit(-1):
            await asyncio.sleep(30)


@LIMITS
async def test_none_never_fires(limit: Limit) -> None:
    async with limit(None) as cm:
        await asyncio.sleep(0.02)
    assert not cm.expired()


@LIMITS
async def test_limits_fire_each_at_its_own_time_in_order(limit: Limit) -> None:
    """Entered longest first: each shorter one must not wait for the timer of a longer."""
    fired: list[object] = []
    started = time.monotonic()
    tasks = [asyncio.create_task(_cut_after(limit, s, fired)) for s in (0.3, 0.2, 0.1, 0.25)]
    longest = asyncio.create_task(_cut_after(limit, 10.0, fired))
    await asyncio.wait(tasks)
    assert fired == [0.1, 0.2, 0.25, 0.3]
    assert time.monotonic() - started < 8  # not held up behind the 10 s one
    longest.cancel()
    with pytest.raises(asyncio.CancelledError):
        await longest
    assert fired == [0.1, 0.2, 0.25, 0.3]  # a cancellation from outside is no timeout


@LIMITS
async def test_a_nested_shorter_limit_cuts_only_its_own_block(limit: Limit) -> None:
    async with limit(10) as outer:
        with pytest.raises(TimeoutError):
            async with limit(0.02) as inner:
                await asyncio.sleep(30)
        assert inner.expired()
        await asyncio.sleep(0.05)  # the outer block goes on, uncut
    assert not outer.expired()


@LIMITS
async def test_a_nested_longer_limit_yields_to_the_outer_one(limit: Limit) -> None:
    with pytest.raises(TimeoutError):
        async with limit(0.02) as outer:
            async with limit(10) as inner:
                await asyncio.sleep(30)
    assert outer.expired() and not inner.expired()


@LIMITS
async def test_a_cancellation_from_outside_propagates_as_one(limit: Limit) -> None:
    async def body() -> None:
        async with limit(10):
            await asyncio.sleep(30)

    task = asyncio.create_task(body())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@LIMITS
async def test_a_cancellation_at_the_deadline_still_propagates(limit: Limit) -> None:
    """The deadline and an outside cancel in the same iteration: the cancel wins (no
    TimeoutError would tell the canceller its request was heard)."""
    async def body() -> None:
        async with limit(0):
            asyncio.current_task().cancel()  # type: ignore[union-attr]
            await asyncio.sleep(30)

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(body())


@LIMITS
async def test_an_error_in_the_block_passes_through(limit: Limit) -> None:
    with pytest.raises(KeyError):
        async with limit(10):
            raise KeyError("x")


@LIMITS
async def test_a_limit_is_entered_once(limit: Limit) -> None:
    cm = limit(10)
    async with cm:
        pass
    with pytest.raises(RuntimeError):
        async with cm:
            pass


async def test_limits_left_early_do_not_pile_up() -> None:
    """A busy worker enters thousands of limits a second and leaves nearly all of them
    before their deadline: their entries must not grow with the traffic."""
    for _ in range(20_000):
        async with time_limit(60):
            pass
    _, timer = _timer()
    assert len(timer._heap) <= 2 * 512
    with pytest.raises(TimeoutError):  # and the timer still works after the rebuilds
        async with time_limit(0.01):
            await asyncio.sleep(30)


def test_under_uvloop_too() -> None:
    """uvloop's timers count in milliseconds: one may fire a little before its time."""
    async def main() -> list[object]:
        outcomes: list[object] = []

        async def quick() -> None:
            async with time_limit(5):
                await asyncio.sleep(0)
            outcomes.append("quick")

        await asyncio.gather(_cut_after(time_limit, 0.0105, outcomes),
                             _cut_after(time_limit, 0.0101, outcomes), quick(),
                             _cut_after(time_limit, 0.05, outcomes))
        return outcomes

    assert uvloop.run(main()) == ["quick", 0.0101, 0.0105, 0.05]
