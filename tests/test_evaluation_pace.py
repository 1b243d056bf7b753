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
            time.sleep(0.05)
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
