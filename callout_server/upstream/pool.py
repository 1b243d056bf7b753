"""The endpoints of one configuration, and the choice among them.

Power of two random choices: two distinct endpoints drawn at random (by weight) among those
healthy, not drained and below `max_in_flight`, the one with the lower cost (peak-EWMA latency x
(in flight + 1) / weight) wins. Cheap (no sort, no scan of the whole pool's costs), and a
replica that turns slow loses nearly every draw from its first slow answer on, with no error
ever raised. An endpoint whose cool-down is over is handed the next call as its probe.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Collection

from callout_server.llm import LLMConfig
from callout_server.upstream.endpoint import EndpointState
from callout_server.upstream.slots import wait_for_slot


def pool_urls(cfg: LLMConfig) -> list[tuple[str, float]]:
    """(base URL, weight) of every endpoint: the configuration's own first, with weight 1."""
    seen = {cfg.base_url.rstrip("/")}
    urls = [(cfg.base_url, 1.0)]
    for ep in cfg.endpoints:
        url = ep.base_url.rstrip("/")
        if url not in seen:
            seen.add(url)
            urls.append((ep.base_url, ep.weight))
    return urls


class Pool:
    def __init__(self, cfg: LLMConfig, endpoints: list[EndpointState]) -> None:
        self.cfg = cfg
        self.endpoints = endpoints
        self.max_in_flight = cfg.max_in_flight
        for ep in endpoints:  # each endpoint calls with the configuration pointed at its URL
            ep.cfg = cfg if ep.base_url == cfg.base_url else dataclasses.replace(
                cfg, base_url=ep.base_url)
            ep.config_id = cfg.id
        self._freed: asyncio.Event | None = None

    def pick(self, now: float, rng: random.Random, exclude: Collection[EndpointState] = (),
             ) -> tuple[EndpointState, bool] | None:
        """(endpoint, is_probe), or None when no endpoint can take the call now."""
        cap = self.max_in_flight
        ready: list[EndpointState] = []
        for ep in self.endpoints:
            if ep in exclude or not ep.has_room(cap):
                continue
            if ep.cooling:
                if ep.probe_due(now):
                    return ep, True
                continue
            ready.append(ep)
        if not ready:
            return None
        if len(ready) == 1:
            return ready[0], False
        a, b = _two_by_weight(ready, rng)
        return (a if a.cost(now) <= b.cost(now) else b), False

    def last_resort(self, exclude: Collection[EndpointState] = ()) -> EndpointState | None:
        """The cooling endpoint due back first, for a call that has nowhere else to go."""
        candidates = [ep for ep in self.endpoints
                      if ep not in exclude and ep.has_room(self.max_in_flight)]
        return min(candidates, key=lambda ep: ep.cooldown_until, default=None)

    def full(self, exclude: Collection[EndpointState] = ()) -> bool:
        """Some endpoint would take the call but for `max_in_flight`: a slot is worth a wait
        (a drained one frees none)."""
        return any(ep not in exclude and not ep.cooling and ep.drain is None
                   and not ep.has_room(self.max_in_flight) for ep in self.endpoints)

    async def wait_for_slot(self, timeout_s: float, tier: str | None = None) -> bool:
        """Until a slot frees at one of the endpoints (shared slots: NLU calls first, then
        chat, then scripts, see slots.py), at most `timeout_s`."""
        shared = [ep.slots for ep in self.endpoints if ep.slots is not None and ep.drain is None]
        if shared:
            return await wait_for_slot(shared, tier or self.cfg.tier, timeout_s)
        if timeout_s <= 0:
            return False
        if self._freed is None:
            self._freed = asyncio.Event()
        try:
            async with asyncio.timeout(timeout_s):
                await self._freed.wait()
        except TimeoutError:
            return False
        return True

    def released(self) -> None:
        """A request of this pool ended: wake the calls waiting for a slot."""
        freed = self._freed
        if freed is not None:
            self._freed = None
            freed.set()


def _two_by_weight(ready: list[EndpointState], rng: random.Random,
                   ) -> tuple[EndpointState, EndpointState]:
    if all(ep.weight == ready[0].weight for ep in ready):
        a, b = rng.sample(ready, 2)
        return a, b
    weights = [ep.weight for ep in ready]
    a = rng.choices(ready, weights)[0]
    rest = [ep for ep in ready if ep is not a]
    b = rng.choices(rest, [ep.weight for ep in rest])[0]
    return a, b
