"""Which side of a running canary a phone call is on: a keyed hash of its call_id. Pure.

    on_canary(salt, call_id, basis_points)   True for about basis_points/10_000 of call ids
    RunningCanary                            a running canary as a worker serves it
    CanarySplit(running).chooser("nlu")      (active route, call_id) -> the route to call

The hash is BLAKE2b over the canary's own salt followed by the call_id (the salt is stored
on the canary's row, so the split is identical on every worker and stable for the canary's
life; the salt first rather than as BLAKE2b's key: the same strength here, half the cost): every request of one phone call lands on
the same side, on whichever worker, and a new canary draws a fresh sample of calls. A
request without a call_id goes to the active side. Memory only: no I/O, no lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from hashlib import blake2b

from callout_server.upstream import Route

SCALE = 10_000  # shares are counted in basis points (0.01 %)
ACTIVE, CANARY = "active", "canary"


def basis_points(percent: float) -> int:
    return round(percent * SCALE / 100)


def bucket(salt: bytes, call_id: str) -> int:
    """0 <= bucket < SCALE, uniform over call ids, fixed for (salt, call_id)."""
    digest = blake2b(salt + call_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SCALE


def on_canary(salt: bytes, call_id: str | None, points: int) -> bool:
    return call_id is not None and bucket(salt, call_id) < points


class RunningCanary:
    """One running canary: its candidate's route (labelled `canary`) and the split."""

    __slots__ = ("_labelled", "candidate", "candidate_id", "id", "points", "salt", "tier")

    def __init__(self, *, id: int, tier: str, candidate_id: int, percent: float, salt: str,
                 candidate: Route) -> None:
        self.id = id
        self.tier = tier
        self.candidate_id = candidate_id
        self.points = basis_points(percent)
        self.salt = bytes.fromhex(salt)
        self.candidate = Route(candidate.primary, candidate.fallbacks, CANARY)
        self._labelled: tuple[Route, Route] | None = None

    def active_side(self, active: Route) -> Route:
        """`active` labelled `active` (built once per active route)."""
        pair = self._labelled
        if pair is None or pair[0] is not active:
            pair = self._labelled = (active, Route(active.primary, active.fallbacks, ACTIVE))
        return pair[1]

    def route(self, active: Route, call_id: str | None) -> Route:
        if on_canary(self.salt, call_id, self.points):
            return self.candidate
        return self.active_side(active)


Chooser = Callable[[Route, "str | None"], Route]


class CanarySplit:
    """Reads the running canaries from the snapshot (`running()`: memory only)."""

    def __init__(self, running: Callable[[], Mapping[str, RunningCanary]]) -> None:
        self._running = running

    def chooser(self, tier: str) -> Chooser:
        running = self._running

        def choose(active: Route, call_id: str | None) -> Route:
            canary = running().get(tier)
            return active if canary is None else canary.route(active, call_id)

        return choose
