"""SQL of the global intents: the list and its version, read and replaced whole."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.db.base import utcnow
from callout_server.intents.models import GlobalIntentRow, GlobalIntentsState
from callout_server.phrases import GlobalIntent

STATE_ID = 1


class IntentsRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def state(self, *, for_update: bool = False) -> GlobalIntentsState | None:
        q = select(GlobalIntentsState).where(GlobalIntentsState.id == STATE_ID)
        if for_update:
            q = q.with_for_update()
        return (await self.session.scalars(q)).first()

    async def rows(self) -> list[GlobalIntentRow]:
        q = select(GlobalIntentRow).order_by(GlobalIntentRow.position)
        return list((await self.session.scalars(q)).all())

    async def replace(self, items: list[GlobalIntent], version: int, actor: str) -> None:
        """The whole list, saved as `version` (the caller checked the one it replaces)."""
        await self.session.execute(delete(GlobalIntentRow))
        self.session.add_all(GlobalIntentRow(
            position=n, name=i.name, description=i.description, action=i.action,
            enabled=i.enabled, phrases=list(i.phrases)) for n, i in enumerate(items))
        state = await self.state(for_update=True)
        if state is None:
            self.session.add(GlobalIntentsState(id=STATE_ID, version=version,
                                                updated_by=actor[:128], updated_at=utcnow()))
        else:
            state.version, state.updated_by, state.updated_at = version, actor[:128], utcnow()
        await self.session.flush()


def intent_of(row: GlobalIntentRow) -> GlobalIntent:
    return GlobalIntent(row.name, row.description, row.action,  # type: ignore[arg-type]
                        row.enabled, tuple(row.phrases))
