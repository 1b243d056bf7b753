"""Endpoints of a pool taken out of service by hand ("drain"), cluster-wide.

    drains = DrainService(writes, file_configs)               # writes: live.LiveWrites
    await drains.drain(EndpointRef(config="7", base_url="http://gpu-02.internal/v1"), actor)
    await drains.undrain(ref, actor)                     # back in service

Ops take a GPU node out (maintenance, a bad driver) without editing the configuration: its
version, revisions and fallbacks stay as they are. A drain is a row (`endpoint_drains`)
written like a configuration change, in one unit of work that bumps the cluster's config
generation and records its audit event (`live.LiveWrites`); once committed the generation is
published, so every worker's next snapshot carries it (the `DRAINS` section, applied by
`Upstreams.set_drains`) within a second with Redis, or a poll interval without. There, the endpoint takes no new request (no probe, no last-resort
call); requests in flight finish. An endpoint is named as GET /api/admin/upstreams names it:
the pool's key (a configuration id, or `file:<tier>` for a config.toml section) and its base
URL as shown (credentials masked, so none are stored here).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.trail import Actor, record
from callout_server.config.errors import EndpointNotFound
from callout_server.config.live import LiveWrites, Section
from callout_server.config.model import TIERS, Tier
from callout_server.config.models import EndpointDrain
from callout_server.config.repository import ConfigRepository
from callout_server.db.base import utcnow
from callout_server.llm import LLMConfig, mask_url
from callout_server.upstream import Drain


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


async def load_drains(session: AsyncSession) -> Mapping[tuple[str, str], Drain]:
    return MappingProxyType({
        (d.config_key, d.base_url): Drain(d.drained_by, d.drained_at.timestamp())
        for d in await ConfigRepository(session).drains()})


# (config key, URL as shown) -> who drained it and when.
DRAINS: Section[Mapping[tuple[str, str], Drain]] = Section(
    "drains", load_drains, initial=MappingProxyType({}))


class DrainService:
    def __init__(self, writes: LiveWrites, file_configs: Mapping[Tier, LLMConfig]) -> None:
        self._writes = writes
        self._file_configs = file_configs

    async def drain(self, ref: EndpointRef, actor: Actor) -> DrainOut:
        return await self._change(ref, actor, drained=True)

    async def undrain(self, ref: EndpointRef, actor: Actor) -> DrainOut:
        return await self._change(ref, actor, drained=False)

    async def _change(self, ref: EndpointRef, actor: Actor, *, drained: bool) -> DrainOut:
        url = ref.base_url.rstrip("/")
        try:
            async with self._writes.unit() as (session, generation):
                repo = ConfigRepository(session)
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
        await self._writes.committed(generation)
        return result

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

