"""The in-memory configuration each worker serves from.

`ConfigStore.current` is an immutable `ConfigSnapshot`; a reload builds a complete new
snapshot off to the side and swaps it in with one attribute assignment, so a request sees
either the old or the new configuration, never a mix, and never waits for a reload. The
hot path (NLU, chat) reads `store.current` only: no database query, no lock, no await.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from callout_server.config.errors import ConfigUnusable
from callout_server.config.keys import stored_key
from callout_server.config.live import Section
from callout_server.config.model import TIERS, Tier
from callout_server.config.models import LLMConfigRow
from callout_server.config.repository import ConfigRepository
from callout_server.config.schemas import call_values
from callout_server.config.secrets import SecretBox, SecretDecryptError
from callout_server.db.engine import Database
from callout_server.llm import LLMConfig
from callout_server.upstream import Route

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ActiveTier:
    source: Literal["db", "file"]
    config: LLMConfig
    updated_at: datetime | None = None
    updated_by: str | None = None
    # Set when the tier's active row cannot be used (its key does not decrypt): the row is
    # never sent upstream and callers get `ConfigUnusable` instead of a silent fallback.
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigSnapshot:
    generation: int
    tiers: Mapping[Tier, ActiveTier]
    loaded_at: float = field(default_factory=time.monotonic)
    # The configurations the active ones fall back to (active or not), by id.
    fallbacks: Mapping[int, LLMConfig] = field(default_factory=lambda: MappingProxyType({}))
    # Live state beside the configurations (live.py), by section name.
    sections: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    _routes: dict[Tier, Route] = field(default_factory=dict)

    def active(self, tier: Tier) -> ActiveTier:
        return self.tiers[tier]

    def section(self, section: Section[T]) -> T:
        """A feature's live state as loaded with this snapshot (its initial value before)."""
        return self.sections.get(section.name, section.initial)  # type: ignore[return-value]

    def config_for(self, tier: Tier) -> LLMConfig:
        """The configuration a call of `tier` runs with; raises when it is unusable."""
        entry = self.tiers[tier]
        if entry.error is not None:
            raise ConfigUnusable(entry.config.id)
        return entry.config

    def route_for(self, tier: Tier) -> Route:
        """The active configuration and its fallbacks, in order (built once per snapshot)."""
        route = self._routes.get(tier)
        if route is None:
            cfg = self.config_for(tier)
            route = self._routes[tier] = Route(cfg, tuple(
                self.fallbacks[i] for i in cfg.fallback_ids if i in self.fallbacks))
        return route

    def routes(self) -> list[Route]:
        """Every tier's usable route (for the upstream health view)."""
        out = []
        for tier in self.tiers:
            try:
                out.append(self.route_for(tier))
            except ConfigUnusable:
                continue
        return out


def row_to_config(row: LLMConfigRow, api_key: str) -> LLMConfig:
    values = call_values(row) | {"extra_params": dict(row.extra_params or {})}
    return LLMConfig(tier=row.tier, api_key=api_key, id=row.id, version=row.version,
                     source="db", **values)


def build_snapshot(generation: int, active_rows: Iterable[LLMConfigRow],
                   file_configs: Mapping[Tier, LLMConfig], secrets: SecretBox,
                   fallback_rows: Iterable[LLMConfigRow] = (), *,
                   sections: Mapping[str, object] | None = None) -> ConfigSnapshot:
    """Active database rows win; a tier without one serves its config.toml section.

    `fallback_rows` are the rows the active ones name in `fallback_ids`; one whose key does
    not decrypt is left out of the route (logged), never sent upstream without its key.
    """
    tiers: dict[Tier, ActiveTier] = {
        t: ActiveTier(source="file", config=file_configs[t]) for t in TIERS}
    for row in active_rows:
        tier: Tier = row.tier  # type: ignore[assignment]
        error = None
        try:
            key = stored_key(secrets, row)
        except SecretDecryptError as exc:
            key, error = "", str(exc)
            log.error("configuration unusable", extra={"config_id": row.id, "tier": tier,
                                                       "reason": exc.reason})
        tiers[tier] = ActiveTier(source="db", config=row_to_config(row, key),
                                 updated_at=row.updated_at, updated_by=row.updated_by,
                                 error=error)
    fallbacks: dict[int, LLMConfig] = {
        entry.config.id: entry.config for entry in tiers.values()
        if entry.config.id is not None and entry.error is None}
    for row in fallback_rows:
        if row.id in fallbacks:
            continue
        try:
            key = stored_key(secrets, row)
        except SecretDecryptError as exc:
            log.error("fallback configuration unusable", extra={"config_id": row.id,
                                                                "reason": exc.reason})
            continue
        fallbacks[row.id] = row_to_config(row, key)
    return ConfigSnapshot(generation=generation, tiers=MappingProxyType(tiers),
                          fallbacks=MappingProxyType(fallbacks),
                          sections=MappingProxyType(dict(sections or {})))


class SnapshotLoader:
    """Reads the cluster's configuration for a worker: the generation, then the snapshot."""

    def __init__(self, db: Database, secrets: SecretBox,
                 file_configs: Mapping[Tier, LLMConfig],
                 sections: Iterable[Section[Any]] = ()) -> None:
        self._db = db
        self._secrets = secrets
        self.file_configs = file_configs
        self.sections = tuple(sections)
        names = [section.name for section in self.sections]
        assert len(set(names)) == len(names), f"section names repeat: {names}"

    async def read_generation(self) -> int:
        async with self._db.session() as session:
            return await ConfigRepository(session).get_generation()

    async def load(self) -> ConfigSnapshot:
        async with self._db.session() as session:
            repo = ConfigRepository(session)
            # Generation first: a change committed between the two reads then shows up as
            # newer rows under an older label, which the next notice/poll reloads again.
            generation = await repo.get_generation()
            rows = await repo.active_rows()
            wanted = sorted({i for r in rows for i in (r.fallback_ids or ())})
            fallback_rows = await repo.get_many(wanted)
            # In the same session, after the generation: one reload moves every section.
            sections = {section.name: await section.load(session) for section in self.sections}
        return build_snapshot(generation, rows, self.file_configs, self._secrets, fallback_rows,
                              sections=sections)

    def initial(self) -> ConfigSnapshot:
        """What a worker serves before its first load: the config.toml sections."""
        return file_snapshot(self.file_configs)


def file_snapshot(file_configs: Mapping[Tier, LLMConfig], generation: int = 0) -> ConfigSnapshot:
    return ConfigSnapshot(generation=generation, tiers=MappingProxyType(
        {t: ActiveTier(source="file", config=file_configs[t]) for t in TIERS}))


Listener = Callable[[ConfigSnapshot], None]


class ConfigStore:
    """Holds the current snapshot; reloads are serialised and coalesced."""

    def __init__(self, initial: ConfigSnapshot,
                 loader: Callable[[], Awaitable[ConfigSnapshot]]) -> None:
        self.current = initial
        self._loader = loader
        self._lock = asyncio.Lock()
        self._listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> None:
        """Called (synchronously, in the event loop) after every swap."""
        self._listeners.append(listener)

    async def refresh(self, expected: int | None = None) -> ConfigSnapshot:
        """Load from the database and swap; skipped when already at `expected`.

        Serialised so that an older load can never overwrite a newer one; a burst of
        notifications for one generation costs one load.
        """
        async with self._lock:
            if expected is not None and self.current.generation == expected:
                return self.current
            snapshot = await self._loader()
            self.swap(snapshot)
            return snapshot

    def swap(self, snapshot: ConfigSnapshot) -> None:
        previous, self.current = self.current, snapshot  # the one atomic step
        if previous.generation != snapshot.generation:
            log.info("configuration generation %d -> %d", previous.generation,
                     snapshot.generation)
        for listener in self._listeners:
            try:
                listener(snapshot)
            except Exception:  # a listener's bug must not stop the swap reaching others
                log.exception("configuration listener failed")
