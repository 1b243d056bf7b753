"""SQL for the configuration tables; nothing here commits (the unit of work does)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.models import ConfigState, EndpointDrain, LLMConfigRevision, LLMConfigRow
from callout_server.db.base import utcnow

_STATE_ID = 1


class ConfigRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    # -- the cluster-wide generation ---------------------------------------------------
    async def get_generation(self) -> int:
        value = await self.session.scalar(
            select(ConfigState.generation).where(ConfigState.id == _STATE_ID))
        return int(value or 0)

    async def bump_generation(self) -> int:
        """+1 and return it. Run first in a write: the row lock serialises config writers
        cluster-wide, so two activations of one tier cannot interleave."""
        new = await self.session.scalar(
            update(ConfigState).where(ConfigState.id == _STATE_ID)
            .values(generation=ConfigState.generation + 1, updated_at=utcnow())
            .returning(ConfigState.generation))
        if new is None:  # the seed row is gone (a wiped table): start again at 1
            self.session.add(ConfigState(id=_STATE_ID, generation=1, updated_at=utcnow()))
            await self.session.flush()
            return 1
        return int(new)

    # -- configurations ------------------------------------------------------------------
    async def list_all(self) -> Sequence[LLMConfigRow]:
        rows = await self.session.scalars(
            select(LLMConfigRow).order_by(LLMConfigRow.tier, LLMConfigRow.id))
        return rows.all()

    async def get(self, config_id: int, *, for_update: bool = False) -> LLMConfigRow | None:
        stmt = select(LLMConfigRow).where(LLMConfigRow.id == config_id)
        if for_update:
            stmt = stmt.with_for_update()
        return (await self.session.scalars(stmt)).one_or_none()

    async def active_rows(self) -> Sequence[LLMConfigRow]:
        rows = await self.session.scalars(
            select(LLMConfigRow).where(LLMConfigRow.is_active.is_(True)))
        return rows.all()

    async def get_many(self, ids: Sequence[int]) -> Sequence[LLMConfigRow]:
        if not ids:
            return []
        rows = await self.session.scalars(select(LLMConfigRow).where(LLMConfigRow.id.in_(ids)))
        return rows.all()

    async def name_taken(self, tier: str, name: str, *, except_id: int | None = None) -> bool:
        stmt = select(func.count()).select_from(LLMConfigRow).where(
            LLMConfigRow.tier == tier, LLMConfigRow.name == name)
        if except_id is not None:
            stmt = stmt.where(LLMConfigRow.id != except_id)
        return bool(await self.session.scalar(stmt))

    async def active_in_tier(self, tier: str, *, except_id: int | None = None,
                             ) -> Sequence[LLMConfigRow]:
        stmt = select(LLMConfigRow).where(
            LLMConfigRow.tier == tier, LLMConfigRow.is_active.is_(True)).with_for_update()
        if except_id is not None:
            stmt = stmt.where(LLMConfigRow.id != except_id)
        return (await self.session.scalars(stmt)).all()

    async def add(self, row: LLMConfigRow) -> LLMConfigRow:
        self.session.add(row)
        await self.session.flush()
        return row

    async def flush(self) -> None:
        await self.session.flush()

    async def delete(self, row: LLMConfigRow) -> None:
        await self.session.delete(row)
        await self.session.flush()

    # -- revisions -----------------------------------------------------------------------
    async def add_revision(self, revision: LLMConfigRevision) -> None:
        self.session.add(revision)
        await self.session.flush()

    async def revisions(self, config_id: int, *, limit: int = 200) -> Sequence[LLMConfigRevision]:
        rows = await self.session.scalars(
            select(LLMConfigRevision).where(LLMConfigRevision.config_id == config_id)
            .order_by(LLMConfigRevision.id.desc()).limit(limit))
        return rows.all()

    # -- endpoints drained by hand --------------------------------------------------------
    async def drains(self) -> Sequence[EndpointDrain]:
        return (await self.session.scalars(select(EndpointDrain))).all()

    async def get_drain(self, config_key: str, base_url: str) -> EndpointDrain | None:
        return await self.session.get(EndpointDrain, (config_key, base_url))

    async def add_drain(self, drain: EndpointDrain) -> None:
        self.session.add(drain)
        await self.session.flush()

    async def remove_drain(self, config_key: str, base_url: str) -> bool:
        result = await self.session.execute(delete(EndpointDrain).where(
            EndpointDrain.config_key == config_key, EndpointDrain.base_url == base_url))
        return bool(result.rowcount)  # type: ignore[attr-defined]
