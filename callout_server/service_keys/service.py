"""Creating, listing, changing and revoking service keys: live state (config/live.py).

    keys = ServiceKeyService(writes, hasher)
    created = await keys.create(body, actor)     # created.key: shown this once
    await keys.update(key_id, body, actor)       # limits, tiers, enabled, expiry, name
    await keys.revoke(key_id, actor)             # the row stays (usage names it), the key dies

Each write is one `LiveWrites.unit()`: the cluster's generation bumped first, the row, its
audit event, commit, then published, so every worker's key table follows within a second.
A revoked key is never loaded again; its row keeps its name for the usage history.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from callout_server.audit.trail import Actor, record
from callout_server.config.live import LiveWrites
from callout_server.db.base import utcnow
from callout_server.service_keys.errors import KeyNotFound, KeyVersionConflict
from callout_server.service_keys.hashing import KeyHasher, generate_key, prefix_of
from callout_server.service_keys.models import ServiceKeyRow
from callout_server.service_keys.schemas import KeyCreate, KeyCreated, KeyList, KeyOut, KeyUpdate

# What an update may change, and how the audit trail shows it (values are not secrets).
_FIELDS = ("name", "tiers", "campaign", "rpm", "max_in_flight", "daily_tokens", "expires_at",
           "enabled")


class _Unchanged(Exception):
    def __init__(self, result: KeyOut) -> None:
        self.result = result


def _out(row: ServiceKeyRow) -> dict[str, Any]:
    return {f: getattr(row, f) for f in KeyOut.model_fields}


def _shown(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


class ServiceKeyService:
    def __init__(self, writes: LiveWrites, hasher: KeyHasher) -> None:
        self._writes = writes
        self._hasher = hasher

    async def list(self) -> KeyList:
        async with self._writes.read() as session:
            rows = (await session.scalars(select(ServiceKeyRow).where(
                ServiceKeyRow.revoked_at.is_(None)).order_by(ServiceKeyRow.id))).all()
            return KeyList(items=[KeyOut(**_out(r)) for r in rows])

    async def create(self, body: KeyCreate, actor: Actor) -> KeyCreated:
        key = generate_key()
        now = utcnow()
        async with self._writes.unit() as (session, generation):
            row = ServiceKeyRow(
                name=body.name, prefix=prefix_of(key), digest=self._hasher.digest(key).hex(),
                tiers=body.tiers, campaign=body.campaign, rpm=body.rpm,
                max_in_flight=body.max_in_flight, daily_tokens=body.daily_tokens,
                expires_at=body.expires_at, enabled=True, version=1, created_at=now,
                created_by=actor.name, updated_at=now)
            session.add(row)
            await session.flush()
            record(session, actor, "service_key.create", target=f"service_key:{row.id}",
                   detail={"name": row.name, "prefix": row.prefix, "generation": generation,
                           **{f: _shown(getattr(row, f)) for f in _FIELDS[1:-1]}})
            created = KeyCreated(**_out(row), key=key)
        await self._writes.committed(generation)
        return created

    async def update(self, key_id: int, body: KeyUpdate, actor: Actor) -> KeyOut:
        try:
            return await self._update(key_id, body, actor)
        except _Unchanged as unchanged:  # rolled back: no generation spent, nothing published
            return unchanged.result

    async def _update(self, key_id: int, body: KeyUpdate, actor: Actor) -> KeyOut:
        sent = body.model_fields_set - {"version"}
        async with self._writes.unit() as (session, generation):
            row = await self._row(session, key_id, lock=True)
            if body.version is not None and body.version != row.version:
                raise KeyVersionConflict(key_id, body.version, row.version)
            changes: dict[str, Any] = {}
            for name in _FIELDS:
                if name not in sent:
                    continue
                new = getattr(body, name)
                if name in ("name", "tiers", "enabled") and new is None:
                    continue  # these cannot be removed: null leaves them as they are
                old = getattr(row, name)
                if new != old:
                    changes[name] = {"old": _shown(old), "new": _shown(new)}
                    setattr(row, name, new)
            if not changes:
                raise _Unchanged(KeyOut(**_out(row)))
            row.version += 1
            row.updated_at = utcnow()
            record(session, actor, "service_key.update", target=f"service_key:{key_id}",
                   detail={"name": row.name, "prefix": row.prefix, "changes": changes,
                           "generation": generation})
            result = KeyOut(**_out(row))
        await self._writes.committed(generation)
        return result

    async def revoke(self, key_id: int, actor: Actor) -> None:
        async with self._writes.unit() as (session, generation):
            row = await self._row(session, key_id, lock=True)
            row.revoked_at = row.updated_at = utcnow()
            row.enabled = False
            record(session, actor, "service_key.revoke", target=f"service_key:{key_id}",
                   detail={"name": row.name, "prefix": row.prefix, "generation": generation})
        await self._writes.committed(generation)

    async def _row(self, session: Any, key_id: int, *, lock: bool) -> ServiceKeyRow:
        query = select(ServiceKeyRow).where(ServiceKeyRow.id == key_id,
                                            ServiceKeyRow.revoked_at.is_(None))
        row = (await session.scalars(query.with_for_update() if lock else query)).first()
        if row is None:
            raise KeyNotFound(key_id)
        return row
