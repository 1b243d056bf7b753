"""`Upstreams`: this worker's pools, and the one way the tiers call a model.

    upstreams = Upstreams(LLMClient())                         # once per worker
    served = await upstreams.complete(route, req, deadline_s=1.5)   # served.report
    call = upstreams.call(route, deadline_s=1.5); await call.complete(req)
    async with upstreams.stream(route, req, ttft_timeout_s=5) as stream: ...
    upstreams.views(routes)                                    # GET /api/admin/upstreams

Pools are keyed by configuration (its id, or `file:<tier>`); a configuration saved again
(a new snapshot value) gets a new pool over the same endpoint states, so what was learnt
about a URL survives an unrelated edit. A configuration a snapshot no longer names loses
its pool and its caps with that snapshot, and its endpoint states once idle (`prepare`).
Memory only; nothing here touches the database.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

from callout_server.llm import Completion, LLMClient, LLMConfig, LLMRequest
from callout_server.upstream.calls import Call
from callout_server.upstream.deadline import Deadline
from callout_server.upstream.endpoint import Drain, EndpointState, HealthPolicy
from callout_server.upstream.pool import Pool, pool_urls
from callout_server.upstream.route import Route, Served
from callout_server.upstream.shared_health import HealthChannel, SharedHealth
from callout_server.upstream.slots import Slots
from callout_server.upstream.streams import PoolStream

# Routes whose pools are kept at once: a snapshot's (a few per tier) and evaluations'.
_MAX_ROUTES = 256


def config_key(cfg: LLMConfig) -> str:
    return str(cfg.id) if cfg.id is not None else f"file:{cfg.tier}"


class Upstreams:
    def __init__(self, client: LLMClient, *, policy: HealthPolicy | None = None,
                 rng: random.Random | None = None) -> None:
        self.client = client
        self.policy = policy or HealthPolicy()
        self.rng = rng or random.Random()
        self._pools: dict[str, Pool] = {}
        # id(route) -> (route, its pools): a snapshot's routes live as long as it does, so
        # a call takes its pools in one lookup. Emptied whenever a pool is (re)built, so it
        # never holds a pool `pool()` would not give now; the route it holds keeps its id
        # from being reused.
        self._routes: dict[int, tuple[Route, list[Pool]]] = {}
        self._states: dict[tuple[str, str], EndpointState] = {}
        self._background: set[asyncio.Future[Any]] = set()
        # (config key, shown URL) -> Drain: endpoints taken out of service by hand.
        self._drains: Mapping[tuple[str, str], Drain] = {}
        self.shared: SharedHealth | None = None  # health shared with other workers
        self._slots: dict[str, Slots] = {}  # base URL -> its slots, whoever calls it
        # (config key, URL) -> requests begun at that endpoint when the last snapshot came:
        # unchanged at the next one, a state no snapshot names has been idle since.
        self._marks: dict[tuple[str, str], int] = {}

    def __repr__(self) -> str:
        return f"<Upstreams pools={len(self._pools)}>"

    # -- pools ---------------------------------------------------------------------------
    def pool(self, cfg: LLMConfig) -> Pool:
        key = config_key(cfg)
        pool = self._pools.get(key)
        if pool is None or pool.cfg is not cfg:
            pool = self._pools[key] = self._build(key, cfg)
            self._routes.clear()
        return pool

    def route_pools(self, route: Route) -> list[Pool]:
        """`route`'s pools, in its order (`pool()` of each configuration, kept per route)."""
        held = self._routes.get(id(route))
        if held is not None and held[0] is route:
            return held[1]
        pools = [self.pool(cfg) for cfg in route.chain]
        if any(self._pools.get(config_key(p.cfg)) is not p for p in pools):
            return pools  # two of its configurations share a key: each call rebuilds them
        if len(self._routes) >= _MAX_ROUTES:
            self._routes.clear()
        self._routes[id(route)] = (route, pools)
        return pools

    def _build(self, key: str, cfg: LLMConfig) -> Pool:
        urls = pool_urls(cfg)
        # An endpoint the configuration no longer lists is forgotten (a request still in
        # flight there finishes on its own state object).
        wanted = {url.rstrip("/") for url, _ in urls}
        for state_key in [k for k in self._states if k[0] == key and k[1] not in wanted]:
            self._states.pop(state_key).retire()
            self._slots_of(state_key[1]).drop_cap(key)
        endpoints = []
        for url, weight in urls:
            state = self._states.get((key, url.rstrip("/")))
            if state is None:
                state = EndpointState(key, cfg.id, url, weight, self.policy)
                state.drain = self._drains.get((key, state.shown_url))
                self._states[(key, url.rstrip("/"))] = state
                if self.shared is not None:
                    self.shared.attach(state)
            state.base_url, state.weight = url, weight
            state.slots = self._slots_of(url)
            state.slots.set_cap(key, cfg.max_in_flight)
            endpoints.append(state)
        return Pool(cfg, endpoints)

    def _slots_of(self, url: str) -> Slots:
        """One set of slots per base URL: the smallest cap any configuration naming it sets."""
        url = url.rstrip("/")
        slots = self._slots.get(url)
        if slots is None:
            slots = self._slots[url] = Slots(url)
        return slots

    def share_health(self, channel: HealthChannel) -> SharedHealth:
        """Cool-downs and probe verdicts shared with the other workers over `channel`
        (shared_health.py); the channel hands what it hears to `.receive`."""
        self.shared = SharedHealth(lambda: self._states.values(), channel)
        for state in self._states.values():
            self.shared.attach(state)
        return self.shared

    def hold(self, task: asyncio.Future[Any]) -> None:
        """Keep a cancelled request alive until it has closed its connection."""
        if not task.done():
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # -- calls ---------------------------------------------------------------------------
    def call(self, route: Route | LLMConfig, *, deadline_s: float | None = None,
             started: float | None = None) -> Call:
        """A call to make (`await call.complete(req)`), whose attempts stay readable after
        its caller ended it (`call.report(diagnostic)`). `deadline_s` bounds the whole call,
        failover and hedging included (deadline.py says which limit fires first); with
        `started` (`time.perf_counter()` when the caller's clock started: a request's
        arrival) the deadline and the report's latency count from there."""
        route = Route.of(route)
        spent = 0.0 if started is None else max(time.perf_counter() - started, 0.0)
        return Call(route, self.route_pools(route), self.client,
                    deadline=Deadline(deadline_s, spent_s=spent), rng=self.rng,
                    hold=self.hold, started=started)

    async def complete(self, route: Route | LLMConfig, req: LLMRequest, *,
                       deadline_s: float | None = None) -> Served[Completion]:
        """One non-streamed answer with failover (and hedging when the primary asks for it)."""
        return await self.call(route, deadline_s=deadline_s).complete(req)

    def stream(self, route: Route | LLMConfig, req: LLMRequest, *,
               ttft_timeout_s: float | None = None, read_timeout_s: float | None = None,
               ) -> PoolStream:
        """A streamed answer; it fails over only before its first event. No overall deadline:
        its limits are each attempt's (first token, gaps, total)."""
        return PoolStream(self.call(route), req,
                          ttft_timeout_s=ttft_timeout_s, read_timeout_s=read_timeout_s)

    def set_drains(self, drains: Mapping[tuple[str, str], Drain]) -> None:
        """The endpoints taken out of service by hand, keyed by (config key, URL as shown):
        every endpoint named takes no new request from now on, the others take traffic
        again. Called with each configuration snapshot (the drains travel with it)."""
        self._drains = dict(drains)
        for state in self._states.values():
            state.drain = self._drains.get((state.config_key, state.shown_url))

    def prepare(self, routes: Iterable[Route | LLMConfig]) -> None:
        """Each configuration snapshot's `routes`: their pools built now (every cap on a base
        URL counts from the start, not from the first call of its configuration), and what
        the snapshot no longer names retired (`_retire`)."""
        self._retire(self._build_routes(routes))

    def _build_routes(self, routes: Iterable[Route | LLMConfig]) -> set[str]:
        keys: set[str] = set()
        for route in routes:
            for cfg in Route.of(route).chain:
                self.pool(cfg)
                keys.add(config_key(cfg))
        return keys

    def _retire(self, listed: set[str]) -> None:
        """Configurations outside `listed` (deactivated, deleted, replaced; a try-out, an
        evaluation or a canary's candidate, none of them in a snapshot's routes).

        Their pools go and their caps on shared URLs are released now: a configuration that
        replaced one on the same URL has its own cap at once. A call holding such a pool
        finishes on the same states and slots; a later call of the configuration (the
        try-out, evaluation or canary still going) builds its pool again over the same
        states, cap included. The states (health, metric series, the health view's rows)
        go once idle, nothing begun and nothing in flight since the previous snapshot: what
        was observed of a configuration just replaced stays readable a while, and one still
        in use keeps what it learnt. Runs with a snapshot, never per call."""
        retired = [k for k in self._pools if k not in listed]
        for key in retired:
            del self._pools[key]
        if retired:
            self._routes.clear()  # never hands out a pool that no longer holds its cap
        marks: dict[tuple[str, str], int] = {}
        for state_key, state in list(self._states.items()):
            begun = state.begun
            if state_key[0] not in self._pools:
                if state.slots is not None:
                    state.slots.drop_cap(state_key[0])
                if state.in_flight == 0 and self._marks.get(state_key) == begun:
                    del self._states[state_key]
                    state.retire()
                    continue
            marks[state_key] = begun
        self._marks = marks
        # A URL nothing names any more, with nothing in flight or waiting there.
        named = {id(state.slots) for state in self._states.values()}
        for url in [u for u, s in self._slots.items() if id(s) not in named and s.idle]:
            del self._slots[url]

    # -- what ops see --------------------------------------------------------------------
    def views(self, routes: Iterable[Route | LLMConfig] = ()) -> list[dict[str, Any]]:
        """Every endpoint of `routes` (configured) and of every pool called so far, until
        it has been idle through a snapshot that does not name its configuration."""
        self._build_routes(routes)  # no retiring: a read never forgets what was observed
        return [state.view() for state in self._states.values()]
