"""One endpoint, one set of slots: the requests in flight at a base URL on this worker.

    slots = Slots("http://gpu-01.internal/v1")        # one per base URL (Upstreams makes them)
    slots.set_cap("7", 64); slots.set_cap("9", 16)    # each configuration naming the URL
    slots.limit                                       # 16: the smallest cap any of them sets
    await wait_for_slot([slots], "nlu", timeout_s)    # True: a slot was freed for this call

An endpoint is its base URL: configurations (of one tier or several) that name the same URL
share its `max_in_flight`, because the GPU behind it is one. Each endpoint state counts its
own requests too (the balancer's cost, the health view); these count them all.

A call that finds every endpoint full waits in a priority queue: NLU decisions first (a
caller is on the line waiting for the next prompt), then chat turns, then script
generation (an operator at a desk), first come first served within a tier. A freed slot is
handed to the first waiter and kept for it (`reserved`) until it runs, so a call arriving in
between cannot take it; a waiter that gives up, or finds a better endpoint, passes it on.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from callout_server.llm import TIER_PRIORITY

# Lower first (the order vLLM's `priority` field follows too). Another tier waits with chat.
TIER_RANK = TIER_PRIORITY
_ORDER = itertools.count()  # first come first served within a rank, across every queue


class _Waiter:
    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[Slots]) -> None:
        self.future = future


class Slots:
    """Mutable, owned by its worker's event loop (no lock: one loop)."""

    __slots__ = ("_waiting", "caps", "in_flight", "limit", "reserved", "url")

    def __init__(self, url: str) -> None:
        self.url = url
        self.in_flight = 0
        self.reserved = 0  # freed slots handed to a waiter that has not run yet
        self.caps: dict[str, int | None] = {}  # configuration key -> its max_in_flight
        self.limit: int | None = None
        self._waiting: list[tuple[int, int, _Waiter]] = []  # heap: (rank, order, waiter)

    def __repr__(self) -> str:
        return f"<Slots {self.in_flight}/{self.limit} waiting={self.waiting}>"

    @property
    def waiting(self) -> int:
        return sum(1 for *_, w in self._waiting if not w.future.done())

    # -- the configurations naming this URL --------------------------------------------
    def set_cap(self, config_key: str, cap: int | None) -> None:
        self.caps[config_key] = cap
        self._limit()

    def drop_cap(self, config_key: str) -> None:
        self.caps.pop(config_key, None)
        self._limit()

    @property
    def idle(self) -> bool:
        """No configuration's cap, nothing in flight, kept or waiting: safe to forget."""
        return not self.caps and self.in_flight == 0 and self.reserved == 0 and not self.waiting

    def _limit(self) -> None:
        caps = [c for c in self.caps.values() if c is not None]
        self.limit = min(caps) if caps else None
        self.hand_over()  # a raised limit frees slots at once

    # -- one request's slot ------------------------------------------------------------
    def has_room(self) -> bool:
        return self.limit is None or self.in_flight + self.reserved < self.limit

    def taken(self) -> None:
        self.in_flight += 1

    def freed(self) -> None:
        self.in_flight -= 1
        self.hand_over()

    def hand_over(self) -> None:
        """Give each free slot to the first waiter, and keep it for it."""
        while self._waiting and self.has_room():
            *_, waiter = heapq.heappop(self._waiting)
            if waiter.future.done():  # gave up, or served by another endpoint's slot
                continue
            self.reserved += 1
            waiter.future.set_result(self)

    def _enqueue(self, rank: int, order: int, waiter: _Waiter) -> None:
        heapq.heappush(self._waiting, (rank, order, waiter))

    def _forget(self, waiter: _Waiter) -> None:
        before = len(self._waiting)
        self._waiting = [e for e in self._waiting if e[2] is not waiter]
        if len(self._waiting) != before:
            heapq.heapify(self._waiting)


async def wait_for_slot(slots: list[Slots], tier: str, timeout_s: float) -> bool:
    """Wait (at most `timeout_s`) until one of `slots` frees a slot for a call of `tier`.

    True: the slot is free now; the caller takes it before its next await (picking its
    endpoint is synchronous). Left unused, it goes to the next waiter once the caller yields.
    """
    if timeout_s <= 0 or not slots:
        return False
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Slots] = loop.create_future()
    waiter = _Waiter(future)
    rank, order = TIER_RANK.get(tier, 1), next(_ORDER)
    unique = list(dict.fromkeys(slots))
    for s in unique:
        s._enqueue(rank, order, waiter)
        s.hand_over()  # room already (a slot freed since the caller looked): at once
    granted: Slots | None = None
    try:
        async with asyncio.timeout(timeout_s):
            granted = await future
    except TimeoutError:
        pass
    finally:
        if not future.done():
            future.cancel()
        elif not future.cancelled() and granted is None:  # given a slot, but gave up
            lost = future.result()
            lost.reserved -= 1
            lost.hand_over()
        for s in unique:
            if s is not granted:
                s._forget(waiter)
    if granted is None:
        return False
    granted.reserved -= 1
    # Taken by the caller's pick, or else passed on as soon as the caller yields.
    loop.call_soon(granted.hand_over)
    return True
