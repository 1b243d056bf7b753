"""Replays hold back while the event loop runs late (live requests queueing)."""

from __future__ import annotations

import asyncio
import time

from callout_server.evaluation.runner import LoopLag


async def test_replays_wait_while_the_loop_is_late_and_go_when_it_keeps_up() -> None:
    lag = LoopLag(period_s=0.005, busy_s=0.02)
    ticker = asyncio.create_task(lag.run())
    hogging = True

    async def hog() -> None:  # CPU-bound stretches of 50 ms: everything else on the loop waits
        while hogging:
            time.sleep(0.05)  # noqa: ASYNC251 (the point: a stretch that blocks the loop)
            await asyncio.sleep(0)

    try:
        await asyncio.wait_for(lag.wait_calm(), 1.0)  # an idle loop: go at once
        hogger = asyncio.create_task(hog())
        await asyncio.sleep(0.2)  # the ticker has seen the loop late by now
        waiter = asyncio.create_task(lag.wait_calm())
        await asyncio.sleep(0.3)
        assert not waiter.done() and lag.lag_s > 0.02
        hogging = False
        await hogger
        await asyncio.wait_for(waiter, 5.0)  # calm again within a few ticks
    finally:
        hogging = False
        ticker.cancel()


async def test_the_pacer_spaces_starts_by_the_rate_across_workers() -> None:
    from callout_server.evaluation.runner import Pacer

    pacer = Pacer(rate=50.0)  # one start every 20 ms, whoever asks
    starts: list[float] = []
    loop = asyncio.get_running_loop()

    async def worker() -> None:
        for _ in range(5):
            await pacer.wait_turn()
            starts.append(loop.time())

    began = loop.time()
    await asyncio.gather(*(worker() for _ in range(4)))
    assert len(starts) == 20
    # 20 starts at 50/s take at least 19 intervals, never a burst
    assert starts[-1] - began >= 19 * 0.02 - 0.005
