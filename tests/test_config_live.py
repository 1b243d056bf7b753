"""Live state (config/live.py): a feature's section rides on the configuration snapshot, and a
write through `LiveWrites` publishes its generation only once it committed. On PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.errors import DatabaseUnavailable
from callout_server.config.live import LiveWrites, Section
from callout_server.config.repository import ConfigRepository
from callout_server.config.secrets import SecretBox
from callout_server.config.settings import load_settings
from callout_server.config.snapshot import SnapshotLoader
from callout_server.db.engine import Database
from tests.fixtures.app import free_port
from tests.fixtures.database import CONFIG_TOML, SECRET_KEY


class Events:
    def __init__(self) -> None:
        self.committed_: list[int] = []
        self.failures = 0

    async def committed(self, generation: int) -> None:
        self.committed_.append(generation)

    def db_failed(self, exc: BaseException) -> None:
        self.failures += 1


async def _urls(session: AsyncSession) -> tuple[str, ...]:
    rows = await session.execute(text("SELECT base_url FROM callout.endpoint_drains ORDER BY 1"))
    return tuple(r[0] for r in rows)


# A probe feature: its state is the drained URLs, read like any feature reads its rows.
PROBE: Section[tuple[str, ...]] = Section("probe", _urls, initial=("(none yet)",))
INSERT = text("INSERT INTO callout.endpoint_drains (config_key, base_url, drained_by, drained_at)"
              " VALUES ('7', 'http://gpu-02/v1', 'ops', now())")


def _loader(db: Database, *sections: Section[object]) -> SnapshotLoader:
    file_configs = load_settings(CONFIG_TOML, env={}).file_llm_configs
    return SnapshotLoader(db, SecretBox(SECRET_KEY), file_configs, sections=sections)


async def test_a_section_serves_its_initial_value_then_what_a_write_committed(db: Database) -> None:
    loader = _loader(db, PROBE)
    assert loader.initial().section(PROBE) == ("(none yet)",)  # before the first load
    assert (await loader.load()).section(PROBE) == ()
    events = Events()
    writes = LiveWrites(db, events)
    async with writes.unit() as (session, generation):
        await session.execute(INSERT)
    await writes.committed(generation)
    snapshot = await loader.load()
    assert snapshot.section(PROBE) == ("http://gpu-02/v1",)
    assert snapshot.generation == generation == 1 and events.committed_ == [1]


async def test_a_write_that_fails_changes_nothing_and_publishes_nothing(db: Database) -> None:
    events = Events()
    writes = LiveWrites(db, events)
    with pytest.raises(RuntimeError):
        async with writes.unit() as (session, _generation):
            await session.execute(INSERT)
            raise RuntimeError("the feature's own check failed")
    async with writes.read() as session:
        assert await ConfigRepository(session).get_generation() == 0  # the bump rolled back
        assert await _urls(session) == ()
    assert events.committed_ == []


async def test_a_database_that_cannot_be_reached_is_database_unavailable() -> None:
    dead = Database(f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nope", connect_timeout_s=0.5)
    events = Events()
    try:
        with pytest.raises(DatabaseUnavailable):
            async with LiveWrites(dead, events).unit():
                pass
    finally:
        await dead.dispose()
    assert events.failures == 1 and events.committed_ == []


def test_section_names_are_unique_per_loader(db: Database) -> None:
    with pytest.raises(AssertionError, match="repeat"):
        _loader(db, PROBE, Section("probe", _urls, initial=()))
