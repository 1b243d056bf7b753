"""Live state: what operators change at run time, kept the way model configurations are.

    DRAINS = Section("drains", load_drains, initial=MappingProxyType({}))
    store.current.section(DRAINS)                  # memory only: the hot path reads this

    async with writes.unit() as (session, generation):
        ...                                        # the rows, and audit.record(session, ...)
    await writes.committed(generation)             # swap here, publish to the cluster

Model configurations, endpoints drained by hand, and every feature that keeps such state
(global intents, lexicons, service keys, canaries) share one mechanism:

- A **`Section`** says how one database session reads the feature's state into one
  immutable value, and which value a worker serves before its first load (a fresh
  database, one that is down at start). The snapshot loader reads every section in the
  same session as the configurations, after the generation, so one reload moves them all
  together and a request never sees half a change.
- A **write** is one unit of work (`LiveWrites.unit()`) that first bumps the cluster's
  generation (the `config_state` row, whose lock orders every writer of the cluster), then
  changes its rows and writes its audit event in the same transaction; after the commit
  the generation is published: every worker reloads within a second through Redis, else
  within `[redis] poll_interval_s`. A write that fails changes nothing and publishes
  nothing; a database that cannot be reached is a 503 `database_unavailable`.

A feature declares its `Section` beside its repository and hands it to the loader in the
composition root (`services.py`); its readers take `store.current.section(SECTION)`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.errors import DatabaseUnavailable
from callout_server.config.repository import ConfigRepository
from callout_server.db.engine import Database, is_db_unavailable
from callout_server.errors import ApiError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Section(Generic[T]):
    """One feature's live state: `load` reads it (no commit, no write), `initial` is served
    before the first load. `name` is unique among the loader's sections."""

    name: str
    load: Callable[[AsyncSession], Awaitable[T]]
    initial: T


class LiveEvents(Protocol):
    """Who hears about writes: the cluster sync (`bus.ConfigSync`) in a worker."""

    async def committed(self, generation: int) -> None:
        """A write committed `generation`: swap the local snapshot, tell the other workers."""

    def db_failed(self, exc: BaseException) -> None:
        """The database could not be reached (health, and the poll's next probe)."""


class LiveWrites:
    """Units of work for the writers of live state, bounded by `timeout_s`."""

    def __init__(self, db: Database, events: LiveEvents, *, timeout_s: float = 10.0) -> None:
        self.db = db
        self.events = events
        self.timeout_s = timeout_s

    @asynccontextmanager
    async def unit(self) -> AsyncIterator[tuple[AsyncSession, int]]:
        """A write: the session, and the generation it will publish (bumped first)."""
        async with self._session() as session:
            yield session, await ConfigRepository(session).bump_generation()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read of the tables behind the live state (admin lists, revisions)."""
        async with self._session() as session:
            yield session

    async def committed(self, generation: int) -> None:
        await self.events.committed(generation)

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSession]:
        try:
            async with asyncio.timeout(self.timeout_s), self.db.session() as session:
                yield session
        except ApiError:
            raise
        except Exception as exc:
            if is_db_unavailable(exc):
                self.events.db_failed(exc)
                raise DatabaseUnavailable() from exc
            raise
