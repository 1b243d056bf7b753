"""Model configuration use cases; drivable without HTTP.

Every write is one unit of work that first bumps `config_state.generation` (its row lock
serialises configuration writers across the cluster), changes the rows, writes revision
rows and the audit event (`audit.trail.record`, same session), and commits; only then is
the new generation swapped in locally and published (`LiveWrites.committed`, live.py). A failed
write changes nothing and leaves no audit event. Reads of the serving configuration
(`active`) come from the in-memory snapshot; the admin list/get/revisions read the table.
The key's rules are in keys.py, the revision and audit rows in changes.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.trail import Actor
from callout_server.config.changes import add_revision, audit, masked_changes, touch
from callout_server.config.errors import (
    ApiKeyRequired,
    ConfigNotFound,
    ConfigUnusable,
    InUse,
    NameConflict,
    PoolInvalid,
    VersionConflict,
)
from callout_server.config.keys import apply_key, key_would_follow, masked_key, stored_key
from callout_server.config.live import LiveWrites
from callout_server.config.models import LLMConfigRow
from callout_server.config.repository import ConfigRepository
from callout_server.config.schemas import (
    ROW_FIELDS,
    ActiveOut,
    ActiveTierOut,
    LLMConfigCreate,
    LLMConfigList,
    LLMConfigOut,
    LLMConfigUpdate,
    RevisionList,
    RevisionOut,
    call_values,
    endpoint_dicts,
    repeated_base_url,
)
from callout_server.config.secrets import SecretBox, SecretDecryptError
from callout_server.config.snapshot import ConfigStore, row_to_config
from callout_server.config.targets import refuse_targets
from callout_server.db.base import utcnow
from callout_server.errors import ApiError
from callout_server.i18n import current, msg, text
from callout_server.llm import LLMConfig, TargetPolicy, mask_api_key, mask_url

# Row fields an operator writes (api_key is handled apart: it is never diffed in clear).
FIELDS = ROW_FIELDS

# A check by a feature above this package that a configuration may be deleted ("delete")
# or moved to another tier ("move"): it raises its own 409 `in_use` inside the write's
# unit of work (canaries: a configuration in a running canary).
ConfigGuard = Callable[[AsyncSession, LLMConfigRow, str], Awaitable[None]]


class _Unchanged(Exception):
    """Raised inside a write to roll it back when there is nothing to change."""

    def __init__(self, result: LLMConfigOut) -> None:
        self.result = result


class ConfigService:
    def __init__(self, writes: LiveWrites, secrets: SecretBox, store: ConfigStore, *,
                 targets: TargetPolicy | None = None) -> None:
        self.targets = targets or TargetPolicy()
        self.writes = writes
        self.secrets = secrets
        self.store = store
        self._guards: list[ConfigGuard] = []

    def add_guard(self, guard: ConfigGuard) -> None:
        self._guards.append(guard)

    async def _guard(self, repo: ConfigRepository, row: LLMConfigRow, doing: str) -> None:
        for guard in self._guards:
            await guard(repo.session, row, doing)

    # -- units of work (live.py: the generation first, the commit, then the publication) --
    @asynccontextmanager
    async def _read(self) -> AsyncIterator[ConfigRepository]:
        async with self.writes.read() as session:
            yield ConfigRepository(session)

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[tuple[ConfigRepository, int]]:
        try:
            async with self.writes.unit() as (session, generation):
                yield ConfigRepository(session), generation
        except IntegrityError as exc:
            # Normally prevented by the checks below under the generation lock; a race on
            # a database without that lock still ends as a 409, never a 500.
            raise ApiError(msg("config_conflict"), code="conflict", status=409) from exc

    async def _committed(self, generation: int) -> None:
        await self.writes.committed(generation)

    # -- views -------------------------------------------------------------------------
    def view(self, row: LLMConfigRow) -> LLMConfigOut:
        return _out(row, id=row.id, tier=row.tier, api_key_masked=masked_key(self.secrets, row),
                    has_api_key=bool(row.api_key_enc), is_active=row.is_active,
                    version=row.version, updated_at=row.updated_at, updated_by=row.updated_by)

    @staticmethod
    def config_view(cfg: LLMConfig, *, updated_at: Any = None,
                    updated_by: str | None = None) -> LLMConfigOut:
        """A serving configuration (snapshot entry), db row or config.toml section."""
        return _out(cfg, id=cfg.id, tier=cfg.tier, api_key_masked=mask_api_key(cfg.api_key),
                    has_api_key=bool(cfg.api_key), is_active=True, version=cfg.version,
                    updated_at=updated_at, updated_by=updated_by)

    # -- the serving configuration ---------------------------------------------------
    def active(self) -> ActiveOut:
        snap = self.store.current  # memory only: no database query
        tiers = {
            tier: ActiveTierOut(
                source=entry.source, config=self.config_view(
                    entry.config, updated_at=entry.updated_at, updated_by=entry.updated_by),
                # worded for the reader; the snapshot keeps the English for the log
                error=text("config_unusable", current(), config_id=entry.config.id)
                if entry.error else None)
            for tier, entry in snap.tiers.items()}
        return ActiveOut(generation=snap.generation, tiers=tiers)

    # -- reads -------------------------------------------------------------------------
    async def list(self) -> LLMConfigList:
        async with self._read() as repo:
            return LLMConfigList(items=[self.view(r) for r in await repo.list_all()])

    async def get(self, config_id: int) -> LLMConfigOut:
        async with self._read() as repo:
            return self.view(await self._require(repo, config_id))

    async def revisions(self, config_id: int) -> RevisionList:
        async with self._read() as repo:
            rows = await repo.revisions(config_id)
            if not rows and await repo.get(config_id) is None:
                raise ConfigNotFound(config_id)
        items = [RevisionOut.model_validate(r, from_attributes=True) for r in rows]
        for item in items:  # rows written before base_url credentials were masked
            item.changes = masked_changes(item.changes)
        return RevisionList(items=items)

    @staticmethod
    async def _require(repo: ConfigRepository, config_id: int, *,
                       for_update: bool = False) -> LLMConfigRow:
        row = await repo.get(config_id, for_update=for_update)
        if row is None:
            raise ConfigNotFound(config_id)
        return row

    # -- writes ------------------------------------------------------------------------
    async def create(self, body: LLMConfigCreate, actor: Actor) -> LLMConfigOut:
        await refuse_targets(self.targets, body.base_url, body.endpoints)
        async with self._write() as (repo, generation):
            if await repo.name_taken(body.tier, body.name):
                raise NameConflict(body.tier, body.name)
            now = utcnow()
            deactivated = []
            if body.is_active:
                deactivated = await self._deactivate_others(repo, body.tier, None, actor.name,
                                                            generation)
            values = body.model_dump(include=set(FIELDS))
            await self._check_pool(repo, None, body.tier, values)
            row = await repo.add(LLMConfigRow(
                **values, api_key_enc=self.secrets.encrypt(body.api_key) if body.api_key else None,
                version=1, created_at=now, updated_at=now, updated_by=actor.name))
            changes: dict[str, Any] = {f: {"old": None, "new": values[f]} for f in FIELDS}
            if body.api_key:
                changes["api_key"] = {"change": "set"}
            await add_revision(repo, row, "create", changes, actor.name, generation)
            audit(repo, actor, "config.create", row, changes, deactivated)
            result = self.view(row)
        await self._committed(generation)
        return result

    async def update(self, config_id: int, body: LLMConfigUpdate, actor: Actor) -> LLMConfigOut:
        sent = body.changes()
        if "endpoints" in sent:
            sent["endpoints"] = endpoint_dicts(sent["endpoints"])
        if sent.get("price") is not None:  # stored as its JSON object
            sent["price"] = sent["price"].model_dump()
        await refuse_targets(self.targets, sent.get("base_url"), sent.get("endpoints"))
        async with self._write() as (repo, generation):
            row = await self._require(repo, config_id, for_update=True)
            if row.version != body.version:
                raise VersionConflict(config_id, body.version, row.version)
            if key_would_follow(self.secrets, row, sent):
                raise ApiKeyRequired()
            if sent.keys() & {"tier", "base_url", "endpoints", "fallback_ids"}:
                merged = {f: sent.get(f, getattr(row, f)) for f in
                          ("base_url", "endpoints", "fallback_ids")}
                await self._check_pool(repo, row, sent.get("tier", row.tier), merged)
            tier, name = sent.get("tier", row.tier), sent.get("name", row.name)
            if (tier, name) != (row.tier, row.name) and await repo.name_taken(
                    tier, name, except_id=row.id):
                raise NameConflict(tier, name)
            deactivated = []
            if sent.get("is_active", row.is_active):
                deactivated = await self._deactivate_others(repo, tier, row.id, actor.name,
                                                            generation)
            changes = {f: {"old": getattr(row, f), "new": v} for f, v in sent.items()
                       if f != "api_key" and getattr(row, f) != v}
            key_change = apply_key(self.secrets, row, sent)
            if key_change:
                changes["api_key"] = {"change": key_change}
            for f in changes:
                if f != "api_key":
                    setattr(row, f, sent[f])
            touch(row, actor.name)
            await repo.flush()
            await add_revision(repo, row, "update", changes, actor.name, generation)
            audit(repo, actor, "config.update", row, changes, deactivated)
            result = self.view(row)
        await self._committed(generation)
        return result

    async def activate(self, config_id: int, actor: Actor) -> LLMConfigOut:
        try:
            async with self._write() as (repo, generation):
                row = await self._require(repo, config_id, for_update=True)
                if row.is_active:
                    raise _Unchanged(self.view(row))
                await self._guard(repo, row, "activate")  # a canary's promote is not this
                await self.activate_in(repo.session, row, actor, generation)
                result = self.view(row)
        except _Unchanged as unchanged:  # already active: rolled back, nothing to publish
            return unchanged.result
        await self._committed(generation)
        return result

    async def activate_in(self, session: AsyncSession, row: LLMConfigRow, actor: Actor,
                          generation: int) -> None:
        """Activate `row` (not active) inside a caller's unit of work (`LiveWrites.unit()`):
        the tier's other active row deactivated, revisions and audit event written; a canary's
        promotion ends the canary in the same transaction."""
        repo = ConfigRepository(session)
        deactivated = await self._deactivate_others(repo, row.tier, row.id, actor.name,
                                                    generation)
        row.is_active = True
        touch(row, actor.name)
        await repo.flush()
        changes = {"is_active": {"old": False, "new": True}}
        await add_revision(repo, row, "activate", changes, actor.name, generation)
        audit(repo, actor, "config.activate", row, changes, deactivated)

    async def deactivate(self, config_id: int, actor: Actor) -> LLMConfigOut:
        """The tier goes back to its config.toml section; a row not active is left as it is."""
        try:
            async with self._write() as (repo, generation):
                row = await self._require(repo, config_id, for_update=True)
                if not row.is_active:
                    raise _Unchanged(self.view(row))
                await self._guard(repo, row, "deactivate")
                row.is_active = False
                touch(row, actor.name)
                await repo.flush()
                changes = {"is_active": {"old": True, "new": False}}
                await add_revision(repo, row, "deactivate", changes, actor.name, generation)
                audit(repo, actor, "config.deactivate", row, changes, [])
                result = self.view(row)
        except _Unchanged as unchanged:
            return unchanged.result
        await self._committed(generation)
        return result

    async def delete(self, config_id: int, actor: Actor, version: int | None = None) -> None:
        async with self._write() as (repo, generation):
            row = await self._require(repo, config_id, for_update=True)
            if version is not None and row.version != version:
                raise VersionConflict(config_id, version, row.version)
            users = await self._fallback_users(repo, row.id)
            if users:
                raise InUse(row.id, users, "delete")
            await self._guard(repo, row, "delete")
            changes = {f: {"old": getattr(row, f), "new": None} for f in FIELDS}
            if row.api_key_enc:
                changes["api_key"] = {"change": "cleared"}
            await add_revision(repo, row, "delete", changes, actor.name, generation)
            audit(repo, actor, "config.delete", row, {}, [])
            await repo.delete(row)
        await self._committed(generation)

    # -- pools -------------------------------------------------------------------------
    @staticmethod
    async def _fallback_users(repo: ConfigRepository, config_id: int) -> list[int]:
        """Configurations that name `config_id` in their fallback_ids (configurations are few:
        read them all rather than query inside JSON in two SQL dialects)."""
        return [r.id for r in await repo.list_all()
                if r.id != config_id and config_id in (r.fallback_ids or ())]

    async def _check_pool(self, repo: ConfigRepository, row: LLMConfigRow | None, tier: str,
                          values: dict[str, Any]) -> None:
        """What pydantic cannot see alone: the endpoints beside base_url, and fallback ids
        against the stored configurations (422 naming the field; 409 `in_use` for a tier
        change under configurations that fall back to this one)."""
        repeated = repeated_base_url(values["base_url"], values.get("endpoints"))
        if repeated is not None:
            raise PoolInvalid(field=f"endpoints.{repeated}.base_url",
                              code="endpoint_repeats_base_url")
        own_id = row.id if row is not None else None
        if row is not None and tier != row.tier:
            users = await self._fallback_users(repo, row.id)
            if users:
                raise InUse(row.id, users, "move")
            await self._guard(repo, row, "move")
        ids = list(values.get("fallback_ids") or ())
        if not ids:
            return
        if own_id is not None and own_id in ids:
            raise PoolInvalid(field="fallback_ids", code="fallback_self")
        stored = {r.id: r for r in await repo.list_all()}
        for config_id in ids:
            other = stored.get(config_id)
            if other is None:
                raise PoolInvalid(field="fallback_ids", code="fallback_unknown", config_id=config_id)
            if other.tier != tier:
                raise PoolInvalid(field="fallback_ids", code="fallback_other_tier", config_id=config_id,
                                  other=other.tier, tier=tier)

    async def _deactivate_others(self, repo: ConfigRepository, tier: str, keep_id: int | None,
                                 actor: str, generation: int) -> list[int]:
        """Deactivate the tier's other active row(s); returns their ids."""
        # Before the activation itself: the partial unique index is checked per statement.
        others = await repo.active_in_tier(tier, except_id=keep_id)
        for other in others:
            other.is_active = False
            touch(other, actor)
            await repo.flush()
            await add_revision(repo, other, "deactivate",
                               {"is_active": {"old": True, "new": False}}, actor, generation)
        return [other.id for other in others]

    # -- for callers above this package -----------------------------------------------
    async def resolve(self, config_id: int) -> LLMConfig:
        """A stored configuration (active or not) as a call would run with it, key decrypted."""
        async with self._read() as repo:
            row = await self._require(repo, config_id)
        try:
            return row_to_config(row, stored_key(self.secrets, row))
        except SecretDecryptError as exc:
            raise ConfigUnusable(row.id) from exc


def _out(source: LLMConfigRow | LLMConfig, **fields: Any) -> LLMConfigOut:
    values = call_values(source)
    # Credentials in a base URL saved by an older version, or in config.toml, stay hidden.
    values |= {"base_url": mask_url(values["base_url"]),
               "extra_params": dict(values["extra_params"] or {}),
               "endpoints": [e | {"base_url": mask_url(e["base_url"])}
                             for e in endpoint_dicts(values["endpoints"])],
               "fallback_ids": list(values["fallback_ids"] or ())}
    return LLMConfigOut(**values, **fields)
