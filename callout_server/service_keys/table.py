"""The service keys every worker holds in memory: the `SERVICE_KEYS` live section.

    table = store.current.section(SERVICE_KEYS)    # KeyTable, rebuilt at every reload
    key = table.lookup(hasher, presented)          # a ServiceKey, or None: no I/O

The table maps a key's digest to its grant; a lookup computes the presented key's digest
(one HMAC per configured secret, a few microseconds) and reads a dict. A dict probe by digest
leaks nothing useful through timing: the digest is keyed with a secret the caller does not
know. Revoked keys are not loaded (their rows stay for the usage history); a disabled or
expired one is, so the caller is told why it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.live import Section
from callout_server.i18n import Msg, msg
from callout_server.service_keys.hashing import MARKER, KeyHasher
from callout_server.service_keys.models import ServiceKeyRow


@dataclass(frozen=True, slots=True)
class ServiceKey:
    """What one key may do; `expires_at` is epoch seconds (None: never)."""

    id: int
    name: str
    prefix: str
    tiers: frozenset[str]
    campaign: str | None = None
    rpm: int | None = None
    max_in_flight: int | None = None
    daily_tokens: int | None = None
    expires_at: float | None = None
    enabled: bool = True

    @property
    def limited(self) -> bool:
        return (self.rpm, self.max_in_flight, self.daily_tokens) != (None, None, None)

    def refusal(self, now: float) -> Msg | None:
        """Why the key is refused right now (disabled, expired), or None."""
        if not self.enabled:
            return msg("service_key_disabled")
        if self.expires_at is not None and now >= self.expires_at:
            return msg("service_key_expired")
        return None

    def allows_tier(self, tier: str) -> bool:
        return tier in self.tiers


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def grant_of(row: ServiceKeyRow) -> ServiceKey:
    return ServiceKey(id=row.id, name=row.name, prefix=row.prefix, tiers=frozenset(row.tiers),
                      campaign=row.campaign, rpm=row.rpm, max_in_flight=row.max_in_flight,
                      daily_tokens=row.daily_tokens, expires_at=_epoch(row.expires_at),
                      enabled=row.enabled)


class KeyTable:
    """Immutable: replaced as a whole at every reload."""

    __slots__ = ("_by_digest", "by_id")

    def __init__(self, keys: dict[bytes, ServiceKey] | None = None) -> None:
        self._by_digest = MappingProxyType(dict(keys or {}))
        self.by_id = MappingProxyType({k.id: k for k in self._by_digest.values()})

    def __len__(self) -> int:
        return len(self._by_digest)

    def lookup(self, hasher: KeyHasher, presented: str) -> ServiceKey | None:
        if not presented.startswith(MARKER):
            return None
        for digest in hasher.candidates(presented):
            found = self._by_digest.get(digest)
            if found is not None:
                return found
        return None


async def load_keys(session: AsyncSession) -> KeyTable:
    rows = (await session.scalars(
        select(ServiceKeyRow).where(ServiceKeyRow.revoked_at.is_(None)))).all()
    return KeyTable({bytes.fromhex(r.digest): grant_of(r) for r in rows})


SERVICE_KEYS: Section[KeyTable] = Section("service_keys", load_keys, initial=KeyTable())
