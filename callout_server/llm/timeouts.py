"""`time_limit(seconds)`: `asyncio.timeout`'s behaviour, with one loop timer for all of them.

Every model call runs inside one or two time limits (the client's total, a probe's limit).
`asyncio.timeout` schedules and cancels a loop timer for each: ~10 µs under uvloop here,
the price of two JSON decodes, for a timer that almost never fires. Here the limits of a
loop wait in one heap behind one timer armed for the earliest of them that is still open:
entering costs a heap push, leaving before the deadline only a flag (the entry is dropped
when the timer next looks at the heap). The timer is re-armed when it fires, or when a
limit earlier than the armed one comes in, so there is about one loop timer per time limit
span, not two per call.

The semantics are asyncio's (3.11): at the deadline the task is cancelled; the block's
`CancelledError` becomes `TimeoutError` unless the task was also cancelled from outside
(then the cancellation propagates); a deadline already past cancels at the next loop
iteration. A limit of `None` never fires.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from types import TracebackType

_OPEN, _EXPIRING, _EXPIRED, _LEFT = 1, 2, 3, 4

# A timer may fire this much before its time by the loop's clock (libuv counts in
# milliseconds): what is due within it is due now, not worth another timer.
_EARLY_S = 0.001
# The heap is rebuilt from its open entries when closed ones outnumber them this much.
_COMPACT_AT, _COMPACT_RATIO = 512, 4


class TimeLimit:
    """An `async with` block's time limit (use `time_limit()`)."""

    __slots__ = ("_cancelling", "_state", "_task", "_timer", "_when")

    def __init__(self, when: float | None, timer: _Timer) -> None:
        self._when = when
        self._timer = timer
        self._state = 0
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0

    def when(self) -> float | None:
        """The deadline, in loop time."""
        return self._when

    def expired(self) -> bool:
        """Whether the deadline cut the block."""
        return self._state in (_EXPIRING, _EXPIRED)

    async def __aenter__(self) -> TimeLimit:
        if self._state:
            raise RuntimeError("TimeLimit has already been entered")
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("TimeLimit should be used inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._state = _OPEN
        if self._when is not None:
            self._timer.add(self)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._state == _EXPIRING:
            self._state = _EXPIRED
            assert self._task is not None
            if self._task.uncancel() <= self._cancelling \
                    and exc_type is asyncio.CancelledError:
                raise TimeoutError from exc  # no other cancellation is pending: ours
        elif self._state == _OPEN:
            self._state = _LEFT
            if self._when is not None:
                self._timer.left()
        return None

    def _expire(self) -> None:
        self._state = _EXPIRING
        assert self._task is not None
        self._task.cancel()


class _Timer:
    """One loop's open time limits, earliest first, behind one armed loop timer."""

    __slots__ = ("_armed", "_handle", "_heap", "_open", "_seq", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[tuple[float, int, TimeLimit]] = []
        self._seq = itertools.count()  # ties broken in arrival order, never by TimeLimit
        self._open = 0
        self._armed: float | None = None
        self._handle: asyncio.TimerHandle | None = None

    def add(self, t: TimeLimit) -> None:
        when = t._when
        assert when is not None
        heapq.heappush(self._heap, (when, next(self._seq), t))
        self._open += 1
        if self._armed is None or when < self._armed:
            self._arm(when)

    def left(self) -> None:
        """A limit's block ended before its deadline: its entry stays until seen."""
        self._open -= 1
        heap = self._heap
        if len(heap) > _COMPACT_AT and len(heap) > _COMPACT_RATIO * self._open:
            self._heap = [entry for entry in heap if entry[2]._state == _OPEN]
            heapq.heapify(self._heap)

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._armed = when
        self._handle = self.loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._handle = self._armed = None
        due = self.loop.time() + _EARLY_S
        heap = self._heap
        while heap:
            when, _, t = heap[0]
            if t._state == _OPEN:
                if when > due:
                    break
                heapq.heappop(heap)
                self._open -= 1
                t._expire()
            else:
                heapq.heappop(heap)  # ended before its deadline: dropped now
        if heap:
            self._arm(heap[0][0])


# The timer of the loop that asked last (one loop per thread; tests start new ones).
_last: _Timer | None = None


def _timer() -> tuple[asyncio.AbstractEventLoop, _Timer]:
    global _last
    loop = asyncio.get_running_loop()
    timer = _last
    if timer is None or timer.loop is not loop:
        timer = _last = _Timer(loop)
    return loop, timer


def time_limit(delay: float | None) -> TimeLimit:
    """A time limit of `delay` seconds from now (None: none), as `asyncio.timeout(delay)`."""
    loop, timer = _timer()
    return TimeLimit(None if delay is None else loop.time() + delay, timer)


def time_limit_at(when: float | None) -> TimeLimit:
    """A time limit at `when`, in loop time (None: none), as `asyncio.timeout_at(when)`."""
    return TimeLimit(when, _timer()[1])
