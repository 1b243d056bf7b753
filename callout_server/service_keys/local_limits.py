"""One worker's own count of a key's limits: the fallback while Redis is away.

Each worker allows `limit // workers` (at least 1) of every limit, so the cluster together
stays within the limit with no one to ask. In-flight requests and today's tokens are counted
here all the time (cheap, in memory), so a worker that falls back knows what it already has
running and what it already spent today.
"""

from __future__ import annotations

import math
import time
from collections import deque

from callout_server.service_keys.errors import (
    BUDGET_EXHAUSTED,
    RATE_LIMITED,
    TOO_MANY_IN_FLIGHT,
    LimitExceeded,
)
from callout_server.service_keys.table import ServiceKey


class LocalLimits:
    def __init__(self, workers: int, window_s: float = 60.0) -> None:
        self.workers = max(1, workers)
        self.window_s = window_s
        self._windows: dict[int, deque[float]] = {}
        self._in_flight: dict[int, int] = {}
        self._tokens: dict[int, tuple[int, int]] = {}  # key -> (UTC day, tokens)

    def share(self, limit: int) -> int:
        return max(1, limit // self.workers)

    def acquire(self, key: ServiceKey) -> None:
        now = time.time()
        day = int(now // 86400)
        if key.daily_tokens is not None:
            spent_day, spent = self._tokens.get(key.id, (day, 0))
            if spent_day == day and spent >= self.share(key.daily_tokens):
                raise LimitExceeded(BUDGET_EXHAUSTED, key.daily_tokens,
                                    math.ceil((day + 1) * 86400 - now))
        if key.max_in_flight is not None and \
                self._in_flight.get(key.id, 0) >= self.share(key.max_in_flight):
            raise LimitExceeded(TOO_MANY_IN_FLIGHT, key.max_in_flight, 1)
        if key.rpm is not None:
            window = self._windows.setdefault(key.id, deque())
            while window and window[0] <= now - self.window_s:
                window.popleft()
            if len(window) >= self.share(key.rpm):
                raise LimitExceeded(RATE_LIMITED, key.rpm, math.ceil(window[0] + self.window_s - now))
            window.append(now)
        self.admitted(key)

    def admitted(self, key: ServiceKey) -> None:
        self._in_flight[key.id] = self._in_flight.get(key.id, 0) + 1

    def in_flight(self, key_id: int) -> int:
        return self._in_flight.get(key_id, 0)

    def release(self, key: ServiceKey) -> None:
        left = self._in_flight.get(key.id, 0) - 1
        if left > 0:
            self._in_flight[key.id] = left
        else:
            self._in_flight.pop(key.id, None)

    def spend(self, key: ServiceKey, tokens: int) -> None:
        day = int(time.time() // 86400)
        spent_day, spent = self._tokens.get(key.id, (day, 0))
        self._tokens[key.id] = (day, (spent if spent_day == day else 0) + max(0, tokens))
