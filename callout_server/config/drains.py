"""Endpoints of a pool taken out of service by hand ("drain"), cluster-wide.

    drains = DrainService(db, events, file_configs)
    await drains.drain(EndpointRef(config="7", base_url="http://gpu-02.internal/v1"), actor)
    await drains.undrain(ref, actor)                     # back in service

Ops take a GPU node out (maintenance, a bad driver) without editing the configuration: its
version, revisions and fallbacks stay as they are. A drain is a row (`endpoint_drains`)
written like a configuration change, in one unit of work that bumps the cluster's config
generation and records its audit event; once committed the generation is published
(`ConfigEvents.committed`), so every worker's next snapshot carries it
(`ConfigSnapshot.drains`, applied by `Upstreams.set_drains`) within a second with Redis, or
a poll interval without. There, the endpoint takes no new request (no probe, no last-resort
call); requests in flight finish. An endpoint is named as GET /api/admin/upstreams names it:
the pool's key (a configuration id, or `file:<tier>` for a config.toml section) and its base
URL as shown (credentials masked, so none are stored here).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime

from pydantic import BaseModel, Field

from callout_server.audit.trail import Actor, record
from callout_server.config.errors import DatabaseUnavailable, EndpointNotFound
from callout_server.config.model import TIERS, Tier
from callout_server.config.models import EndpointDrain
from callout_server.config.repository import ConfigRepository
from callout_server.config.service import ConfigEvents
from callout_server.db.base import utcnow
from callout_server.db.engine import Database, is_db_unavailable
from callout_server.errors import ApiError
from callout_server.llm import LLMConfig, mask_url


class EndpointRef(BaseModel):
    """One endpoint of one pool, as the upstream health table names it."""

    config: str = Field(max_length=64, pattern=r"^([1-9][0-9]{0,18}|file:(nlu|chat|script))$")
    base_url: str = Field(min_length=1, max_length=2048)


class DrainOut(BaseModel):
    config: str
    base_url: str
    drained: bool
    drained_by: str | None = None
    drained_at: datetime | None = None


class _Unchanged(Exception):
    def __init__(self, result: DrainOut) -> None:
        self.result = result


class DrainService:
    def __init__(self, db: Database, events: ConfigEvents,
                 file_configs: Mapping[Tier, LLMConfig], *, write_timeout_s: float = 10.0) -> None:
        self._db = db
        self._events = events
        self._file_configs = file_configs
        self._timeout_s = write_timeout_s

    async def drain(self, ref: EndpointRef, actor: Actor) -> DrainOut:
        return await self._change(ref, actor, drained=True)

    async def undrain(self, ref: EndpointRef, actor: Actor) -> DrainOut:
        return await self._change(ref, actor, drained=False)

    async def _change(self, ref: EndpointRef, actor: Actor, *, drained: bool) -> DrainOut:
        url = ref.base_url.rstrip("/")
        try:
            async with self._write() as (repo, generation):
                name, tier = await self._endpoint(repo, ref.config, url)
                current = await repo.get_drain(ref.config, url)
                if (current is not None) == drained:  # already so: nothing to publish
                    raise _Unchanged(_out(ref.config, url, current))
                if drained:
                    current = EndpointDrain(config_key=ref.config, base_url=url,
                                            drained_by=actor.name, drained_at=utcnow())
                    await repo.add_drain(current)
                else:
                    await repo.remove_drain(ref.config, url)
                    current = None
                record(repo.session, actor, "upstream.drain" if drained else "upstream.undrain",
                       target=f"endpoint:{ref.config}", detail={
                           "name": name, "tier": tier, "base_url": url, "generation": generation})
                result = _out(ref.config, url, current)
        except _Unchanged as unchanged:
            return unchanged.result
        await self._events.committed(generation)
        return result

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[tuple[ConfigRepository, int]]:
        try:
            async with asyncio.timeout(self._timeout_s), self._db.session() as session:
                repo = ConfigRepository(session)
                # First: the generation row's lock orders this among configuration writers.
                yield repo, await repo.bump_generation()
        except (ApiError, _Unchanged):
            raise
        except Exception as exc:
            if is_db_unavailable(exc):
                self._events.db_failed(exc)
                raise DatabaseUnavailable() from exc
            raise

    async def _endpoint(self, repo: ConfigRepository, key: str, url: str) -> tuple[str, str]:
        """The (name, tier) of the configuration whose pool has `url`; 404 otherwise."""
        if key.startswith("file:"):
            tier = key.removeprefix("file:")
            cfg = self._file_configs[tier] if tier in TIERS else None  # type: ignore[index]
            urls = [cfg.base_url, *(e.base_url for e in cfg.endpoints)] if cfg else []
            name = cfg.name if cfg else ""
        else:
            row = await repo.get(int(key))
            urls = [row.base_url, *(e["base_url"] for e in row.endpoints or ())] if row else []
            name, tier = (row.name, row.tier) if row else ("", "")
        if url not in {mask_url(u).rstrip("/") for u in urls}:
            raise EndpointNotFound(key, url)
        return name, tier


def _out(key: str, url: str, drain: EndpointDrain | None) -> DrainOut:
    return DrainOut(config=key, base_url=url, drained=drain is not None,
                    drained_by=drain.drained_by if drain else None,
                    drained_at=drain.drained_at if drain else None)

