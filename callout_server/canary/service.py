"""Canary use cases; drivable without HTTP.

    canaries = CanaryService(writes, config, secrets)
    await canaries.start(CanaryCreate(candidate_id=7, percent=5, rollback=...), actor)
    await canaries.promote(canary_id, actor)      # the candidate activated, the canary ended
    await canaries.stop(canary_id, actor)         # traffic back to the active configuration
    await canaries.rollback_if_crossed(canary_id) # the monitor (monitor.py)

Every write is one unit of work (`LiveWrites.unit()`: the cluster's generation bumped first,
its row lock ordering every writer), changes the canary row, writes its audit event in the
same session and, once committed, publishes the generation: every worker's next snapshot
carries the change (the `canaries` section, state.py) within a second. A promotion
activates the candidate exactly as `ConfigService.activate` does, in the same transaction
that ends the canary, so no worker ever sees one without the other.
"""

from __future__ import annotations

import secrets as random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.trail import Actor, record
from callout_server.canary.errors import (
    CanaryEnded,
    CanaryNotFound,
    CanaryRunning,
    CandidateInvalid,
    ConfigInCanary,
)
from callout_server.canary.figures import crossed, figures
from callout_server.canary.models import RUNNING, CanaryRow
from callout_server.canary.repository import CanaryRepository
from callout_server.canary.schemas import CanaryCreate, CanaryList, CanaryOut, Figures
from callout_server.canary.views import canary_view
from callout_server.config.keys import stored_key
from callout_server.config.live import LiveWrites
from callout_server.config.models import LLMConfigRow
from callout_server.config.repository import ConfigRepository
from callout_server.config.secrets import SecretBox, SecretDecryptError
from callout_server.config.service import ConfigService
from callout_server.db.base import utcnow

# Split by call_id: a script request belongs to no phone call.
SUPPORTED_TIERS = frozenset({"nlu", "chat"})
# Who ends a canary whose limit was crossed (the audit trail's actor).
MONITOR = Actor("canary-monitor", "token")


class _Unchanged(Exception):
    """Raised inside a write to roll it back when there is nothing to change."""


class CanaryService:
    def __init__(self, writes: LiveWrites, config: ConfigService, secrets: SecretBox) -> None:
        self._writes = writes
        self._config = config
        self._secrets = secrets

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[tuple[CanaryRepository, int]]:
        try:
            async with self._writes.unit() as (session, generation):
                yield CanaryRepository(session), generation
        except IntegrityError as exc:  # the partial unique index: a race with no lock
            raise CanaryRunning(tier="?", canary_id=None) from exc

    # -- reads -----------------------------------------------------------------------------
    async def list(self, limit: int = 50) -> CanaryList:
        async with self._writes.read() as session:
            repo = CanaryRepository(session)
            return CanaryList(items=[await self._view(session, row)
                                     for row in await repo.recent(limit)])

    async def get(self, canary_id: int) -> CanaryOut:
        async with self._writes.read() as session:
            return await self._view(session, await _require(CanaryRepository(session),
                                                            canary_id))

    async def figures(self, session: AsyncSession, row: CanaryRow) -> Figures:
        """Both sides' figures over every worker's records since the canary started."""
        repo, now = CanaryRepository(session), utcnow()
        until = row.ended_at
        return figures(await repo.codes(row.tier, row.started_at, until),
                       await repo.percentiles(row.tier, row.started_at, until),
                       await repo.intents(row.tier, row.started_at, until), now)

    async def _view(self, session: AsyncSession, row: CanaryRow) -> CanaryOut:
        if row.status != RUNNING and row.figures is not None:
            numbers = Figures.model_validate(row.figures)
        else:
            numbers = await self.figures(session, row)
        configs = {c.id: c for c in await ConfigRepository(session).get_many(
            [i for i in (row.candidate_id, row.active_id) if i is not None])}
        return canary_view(row, numbers, configs)

    # -- writes ----------------------------------------------------------------------------
    async def start(self, body: CanaryCreate, actor: Actor) -> CanaryOut:
        async with self._write() as (repo, generation):
            configs = ConfigRepository(repo.session)
            candidate = await configs.get(body.candidate_id)
            self._check_candidate(candidate, body.candidate_id)
            assert candidate is not None
            tier = candidate.tier
            running = await repo.running_in(tier)
            if running is not None:
                raise CanaryRunning(tier=tier, canary_id=running.id)
            active = await configs.active_in_tier(tier)
            row = await repo.add(CanaryRow(
                tier=tier, candidate_id=candidate.id, active_id=active[0].id if active else None,
                percent=round(body.percent, 2), salt=random.token_hex(16),
                **body.rollback.model_dump(), status=RUNNING, started_at=utcnow(),
                started_by=actor.name))
            record(repo.session, actor, "canary.start", target=f"canary:{row.id}", detail={
                "tier": tier, "candidate": f"config:{candidate.id}", "model": candidate.model,
                "active": f"config:{row.active_id}" if row.active_id else "file",
                "percent": row.percent, "rollback": body.rollback.model_dump(),
                "generation": generation})
            result = await self._view(repo.session, row)
        await self._writes.committed(generation)
        return result

    def _check_candidate(self, candidate: LLMConfigRow | None, config_id: int) -> None:
        if candidate is None:
            raise CandidateInvalid(code="canary_candidate_unknown", config_id=config_id)
        if candidate.tier not in SUPPORTED_TIERS:
            raise CandidateInvalid(code="canary_tier_unsupported", tier=candidate.tier)
        if candidate.is_active:
            raise CandidateInvalid(code="canary_candidate_active", config_id=config_id,
                                   tier=candidate.tier)
        try:
            stored_key(self._secrets, candidate)
        except SecretDecryptError as exc:
            raise CandidateInvalid(code="canary_candidate_unusable", config_id=config_id) from exc

    async def stop(self, canary_id: int, actor: Actor) -> CanaryOut:
        return await self._end(canary_id, actor, "stopped")

    async def promote(self, canary_id: int, actor: Actor) -> CanaryOut:
        return await self._end(canary_id, actor, "promoted")

    async def rollback_if_crossed(self, canary_id: int) -> bool:
        """Ends the canary (`rolled_back`) when a limit is crossed; True if this call did.

        Every worker's monitor may call it at once: the generation's row lock orders them
        and the first one ends the canary; the others find it ended and write nothing."""
        try:
            await self._end(canary_id, MONITOR, "rolled_back")
        except (_Unchanged, CanaryEnded, CanaryNotFound):
            return False
        return True

    async def _end(self, canary_id: int, actor: Actor, status: str) -> CanaryOut:
        async with self._write() as (repo, generation):
            row = await _require(repo, canary_id, for_update=True)
            if row.status != RUNNING:
                raise CanaryEnded(row.id, row.status)
            now = utcnow()
            numbers = await self.figures(repo.session, row)
            reason = None
            if status == "rolled_back":
                reason = crossed(limits_of(row), numbers.canary)
                if reason is None:
                    raise _Unchanged()
            detail: dict[str, Any] = {"tier": row.tier, "candidate": f"config:{row.candidate_id}",
                                      "calls": {"active": numbers.active.calls,
                                                "canary": numbers.canary.calls},
                                      "generation": generation}
            if status == "promoted":
                candidate = await ConfigRepository(repo.session).get(row.candidate_id,
                                                                      for_update=True)
                if candidate is None:  # held by the in_use guard; a wiped table still answers
                    raise CandidateInvalid(code="canary_candidate_unknown", config_id=row.candidate_id)
                if not candidate.is_active:
                    await self._config.activate_in(repo.session, candidate, actor, generation)
            if reason is not None:
                detail["reason"] = reason
            row.status, row.ended_at, row.ended_by = status, now, actor.name
            row.reason = reason
            row.figures = numbers.model_dump(mode="json")
            await repo.session.flush()
            record(repo.session, actor, f"canary.{_ACTIONS[status]}", target=f"canary:{row.id}",
                   detail=detail)
            result = await self._view(repo.session, row)
        await self._writes.committed(generation)
        return result

    # -- for the configuration service (ConfigService.add_guard) ---------------------------
    async def guard(self, session: AsyncSession, row: LLMConfigRow, doing: str) -> None:
        """A running canary's two sides stay as they are until it ends (409 `in_use`): its
        candidate is neither deleted, moved to another tier nor activated (that is what
        `promote` does, ending the canary with it); its active side is not deleted, and no
        configuration of its tier is activated or deactivated by hand (the canary would be
        weighed against a side that no longer serves, and `stop` would mean nothing)."""
        repo = CanaryRepository(session)
        running = await repo.running_with(row.id)
        if running is None and doing in ("delete", "activate", "deactivate"):
            on_tier = await repo.running_in(row.tier)
            if on_tier is not None and (doing != "delete" or on_tier.active_id == row.id):
                running = on_tier
        if running is not None:
            raise ConfigInCanary(row.id, running.id, doing)


_ACTIONS = {"stopped": "stop", "promoted": "promote", "rolled_back": "rollback"}


def limits_of(row: CanaryRow) -> dict[str, Any]:
    return {"max_fallback_rate": row.max_fallback_rate, "max_error_rate": row.max_error_rate,
            "max_p95_ms": row.max_p95_ms, "min_calls": row.min_calls}


async def _require(repo: CanaryRepository, canary_id: int, *,
                   for_update: bool = False) -> CanaryRow:
    row = await repo.get(canary_id, for_update=for_update)
    if row is None:
        raise CanaryNotFound(canary_id)
    return row
