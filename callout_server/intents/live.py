"""The global intents as live state (`config/live.py`): a `Section` of the snapshot.

    section = intents_section(defaults)            # config.toml's, served until a save
    store.current.section(section)                 # -> CompiledIntents, memory only

Every reload reads the version row; the matcher is compiled again only when the version
moved (a reload caused by another feature's write reuses the compiled value).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.live import Section
from callout_server.intents.compiled import CompiledIntents, compile_intents
from callout_server.intents.repository import IntentsRepository, intent_of
from callout_server.phrases import GlobalIntent

SECTION_NAME = "global_intents"


def intents_section(defaults: Iterable[GlobalIntent]) -> Section[CompiledIntents]:
    initial = compile_intents(defaults, version=0)
    last = [initial]

    async def load(session: AsyncSession) -> CompiledIntents:
        repo = IntentsRepository(session)
        state = await repo.state()
        if state is None:
            return initial
        if last[0].version == state.version and last[0].updated_at == state.updated_at:
            return last[0]
        compiled = compile_intents([intent_of(r) for r in await repo.rows()],
                                   version=state.version, updated_by=state.updated_by,
                                   updated_at=state.updated_at)
        last[0] = compiled
        return compiled

    return Section(SECTION_NAME, load, initial)
