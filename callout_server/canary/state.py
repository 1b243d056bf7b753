"""The running canaries as live state (config/live.py): a `Section` every worker reloads
with its configuration snapshot, read on the hot path from memory.

    section = canary_section(secrets)               # handed to the SnapshotLoader
    store.current.section(section)                  # {"nlu": RunningCanary, ...}

The candidate's route (its configuration and fallbacks, keys decrypted) is built here, once
per reload. A candidate whose key does not decrypt is left out (logged): its tier then
serves the active configuration to every call, never the candidate without its key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.canary.repository import CanaryRepository
from callout_server.canary.split import RunningCanary
from callout_server.config.keys import stored_key
from callout_server.config.live import Section
from callout_server.config.repository import ConfigRepository
from callout_server.config.secrets import SecretBox, SecretDecryptError
from callout_server.config.snapshot import row_to_config
from callout_server.upstream import Route

log = logging.getLogger(__name__)

Running = Mapping[str, RunningCanary]
NAME = "canaries"
EMPTY: Running = MappingProxyType({})


def canary_section(secrets: SecretBox) -> Section[Running]:
    async def load(session: AsyncSession) -> Running:
        rows = await CanaryRepository(session).running()
        if not rows:
            return EMPTY
        configs = ConfigRepository(session)
        out: dict[str, RunningCanary] = {}
        for row in rows:
            candidate = await configs.get(row.candidate_id)
            if candidate is None:
                continue
            try:
                primary = row_to_config(candidate, stored_key(secrets, candidate))
                fallbacks = tuple(
                    row_to_config(f, stored_key(secrets, f))
                    for f in await configs.get_many(list(candidate.fallback_ids or ())))
            except SecretDecryptError as exc:
                log.error("canary candidate unusable", extra={
                    "canary_id": row.id, "config_id": candidate.id, "reason": exc.reason})
                continue
            order = {cid: i for i, cid in enumerate(candidate.fallback_ids or ())}
            fallbacks = tuple(sorted(fallbacks, key=lambda c: order.get(c.id, 0)))
            out[row.tier] = RunningCanary(
                id=row.id, tier=row.tier, candidate_id=row.candidate_id, percent=row.percent,
                salt=row.salt, candidate=Route(primary, fallbacks))
        return MappingProxyType(out)

    return Section(NAME, load, EMPTY)
