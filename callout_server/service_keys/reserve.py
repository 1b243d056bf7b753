"""One worker's reserve of one key's limits: what it took from Redis and admits from alone.

    batches   admissions reserved in one step (limits_lua.py), each usable until its hold
              ends (`reserve_s` after it was asked for); one unit is taken per request
    free      in-flight slots leased and idle, reused by the next request while at least
              half of their lease is left; a request holds one while it runs
    tokens    today's total in Redis as last seen (each reservation and flush reads it)

Every unit and slot here was counted in Redis when it was reserved, so the worker never
admits more than it reserved and the cluster together never exceeds a limit. What a worker
holds idle is bounded: `batch()` admissions and `spare()` slots, each `limit // (4 x
workers)` at most and at most `[service_keys] reserve_max`; unused admissions go back to
Redis when their hold ends, idle slots after `reserve_s` idle (limits.py's sweep).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from callout_server.service_keys.table import ServiceKey

Limits = tuple[int | None, int | None, int | None]


def limits_of(key: ServiceKey) -> Limits:
    return key.rpm, key.max_in_flight, key.daily_tokens


def day_of(now: float) -> tuple[int, float]:
    """The UTC day number of `now` (what `tokens` counts for), and the seconds left in it."""
    day = int(now // 86400)
    return day, (day + 1) * 86400 - now


@dataclass(slots=True)
class Batch:
    """Admissions `prefix a next` .. `prefix a size` not used yet."""
    prefix: str
    size: int
    until: float  # monotonic: the end of its hold
    next: int = 1

    def left(self) -> int:
        return self.size - self.next + 1

    def unused(self) -> list[str]:
        return [f"{self.prefix}a{i}" for i in range(self.next, self.size + 1)]


@dataclass(slots=True)
class Slot:
    member: str
    until: float  # monotonic: reused by a next request until then (half its lease)
    idle_since: float = 0.0


@dataclass(frozen=True, slots=True)
class Round:
    """What one reservation (one run of the script) answered."""
    budget_spent: bool
    admissions_left: int  # in the window, after this grant
    wait_ms: int          # until the window has room again, when none is left
    slots_left: int


@dataclass(slots=True)
class KeyReserve:
    limits: Limits
    batches: deque[Batch] = field(default_factory=deque)
    free: list[Slot] = field(default_factory=list)
    tokens_day: int = -1      # the UTC day `tokens` counts (-1: not read yet)
    tokens: int = 0
    tokens_at: float = 0.0    # monotonic: when `tokens` was read
    used_at: float = 0.0      # monotonic: the last admission (an idle reserve is dropped)
    pending: asyncio.Task[Round] | None = None
    waiting_admissions: int = 0
    waiting_slots: int = 0
    peak: int = 0             # the most of the key's requests running since the last sweep
    taken: int = 0            # admissions used since `rate_at`
    rate_at: float = 0.0      # monotonic
    rate: float = 0.0         # admissions per second, smoothed over the last reservations

    def measure_rate(self, now: float) -> float:
        """This worker's admissions per second for the key, updated at each reservation."""
        elapsed = now - self.rate_at
        if self.rate_at and elapsed > 0:
            current = self.taken / elapsed
            self.rate = current if not self.rate else (self.rate + current) / 2
        self.taken, self.rate_at = 0, now
        return self.rate

    def admissions(self, now: float, handed_back: list[str]) -> int:
        """Units usable now; those whose hold ended go to `handed_back`."""
        while self.batches and (self.batches[0].until <= now or not self.batches[0].left()):
            handed_back.extend(self.batches.popleft().unused())
        return sum(b.left() for b in self.batches)

    def slot_ready(self, now: float, handed_back: list[str]) -> bool:
        """Whether the slot `take` pops next is usable; run-out ones on top go back. O(1)
        per request: the rest of `free` is checked by the sweep (`idle`)."""
        while self.free and self.free[-1].until <= now:
            handed_back.append(self.free.pop().member)
        return bool(self.free)

    def missing(self, key: ServiceKey, now: float, day: int,
                handed_back: list[str]) -> tuple[bool, bool, bool]:
        """(today's tokens not known, no admission, no slot) for one request now."""
        return (key.daily_tokens is not None and self.tokens_day != day,
                key.rpm is not None and not self.admissions(now, handed_back),
                key.max_in_flight is not None and not self.slot_ready(now, handed_back))

    def take(self, key: ServiceKey, now: float) -> Slot | None:
        self.used_at = now
        if key.rpm is not None:
            self.batches[0].next += 1
            self.taken += 1
        return self.free.pop() if key.max_in_flight is not None else None

    def add(self, prefix: str, admissions: int, slots: int, *, hold_until: float,
            slot_until: float) -> None:
        if admissions:
            self.batches.append(Batch(prefix, admissions, hold_until))
        self.free.extend(Slot(f"{prefix}s{i}", slot_until, 0.0) for i in range(1, slots + 1))

    def idle(self, now: float, idle_s: float) -> tuple[list[str], list[str]]:
        """What goes back to Redis now: admissions past their hold, slots idle `idle_s`."""
        admissions: list[str] = []
        self.admissions(now, admissions)
        slots = [s.member for s in self.free if s.until <= now or s.idle_since + idle_s <= now]
        if slots:
            self.free = [s for s in self.free if s.until > now and s.idle_since + idle_s > now]
        return admissions, slots

    def everything(self) -> tuple[list[str], list[str]]:
        admissions = [m for b in self.batches for m in b.unused()]
        slots = [s.member for s in self.free]
        self.batches.clear()
        self.free.clear()
        return admissions, slots
