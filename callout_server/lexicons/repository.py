"""SQL of the lexicons table; the caller's unit of work commits."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.lexicons.models import LexiconRow


class LexiconRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def all(self) -> Sequence[LexiconRow]:
        return (await self.session.scalars(select(LexiconRow).order_by(LexiconRow.name))).all()

    async def get(self, name: str, *, for_update: bool = False) -> LexiconRow | None:
        query = select(LexiconRow).where(LexiconRow.name == name)
        if for_update:
            query = query.with_for_update()
        return (await self.session.scalars(query)).first()

    async def count(self) -> int:
        return int(await self.session.scalar(select(func.count()).select_from(LexiconRow)) or 0)

    async def add(self, row: LexiconRow) -> None:
        self.session.add(row)
        await self.session.flush()

    async def remove(self, name: str) -> None:
        await self.session.execute(delete(LexiconRow).where(LexiconRow.name == name))
