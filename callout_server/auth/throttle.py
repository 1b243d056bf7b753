"""Login backoff: after a few failures per (username, client address), wait before trying again.

In memory and per worker: it slows down online guessing, it is not an account lock (which
would let anyone lock the admin out). With N workers behind a balancer an attacker gets at
most N times the attempts, still a handful per minute. Keyed on the *submitted* username,
so it behaves the same for names that do not exist.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_ATTEMPTS = 5          # failures allowed before any delay
BASE_DELAY_S = 1.0         # first delay, doubled per further failure
MAX_DELAY_S = 300.0
MAX_KEYS = 10_000          # bound memory under a spray of usernames/addresses
FORGET_AFTER_S = 900.0     # a quiet key is forgotten


@dataclass(slots=True)
class _State:
    failures: int
    blocked_until: float
    last_seen: float


class LoginThrottle:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._keys: dict[tuple[str, str], _State] = {}

    @staticmethod
    def key(username: str, client: str) -> tuple[str, str]:
        return (username.strip().lower()[:128], client)

    def retry_after(self, key: tuple[str, str]) -> float:
        """Seconds to wait before this key may try again; 0 when it may try now."""
        state = self._keys.get(key)
        if state is None:
            return 0.0
        return max(0.0, state.blocked_until - self._clock())

    def failure(self, key: tuple[str, str]) -> None:
        now = self._clock()
        state = self._keys.get(key)
        if state is None:
            self._evict(now)
            state = self._keys[key] = _State(0, 0.0, now)
        state.failures += 1
        state.last_seen = now
        extra = state.failures - FREE_ATTEMPTS
        if extra >= 0:
            state.blocked_until = now + min(MAX_DELAY_S, BASE_DELAY_S * 2**extra)

    def success(self, key: tuple[str, str]) -> None:
        self._keys.pop(key, None)

    def _evict(self, now: float) -> None:
        if len(self._keys) < MAX_KEYS:
            return
        stale = [k for k, s in self._keys.items()
                 if now - s.last_seen > FORGET_AFTER_S and s.blocked_until <= now]
        for k in stale:
            del self._keys[k]
        if len(self._keys) >= MAX_KEYS:  # still full: drop the oldest half
            by_age = sorted(self._keys, key=lambda k: self._keys[k].last_seen)
            for k in by_age[: len(by_age) // 2]:
                del self._keys[k]
