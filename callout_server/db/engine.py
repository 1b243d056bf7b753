"""Async engine and session factory for PostgreSQL (asyncpg) or the embedded SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import event
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from callout_server.db.base import SCHEMA


def is_db_unavailable(exc: BaseException) -> bool:
    """Connection-level failures (as opposed to constraint violations or bugs)."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OperationalError | InterfaceError | PoolTimeout | OSError | TimeoutError)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str, *, pool_size: int = 10,
                connect_timeout_s: float | None = None) -> AsyncEngine:
    if is_sqlite(url):
        engine = create_async_engine(
            url, execution_options={"schema_translate_map": {SCHEMA: None}}
        )

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(conn, _record):  # type: ignore[no-untyped-def]
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    # A bounded connect: with the database unreachable, callers get an error in seconds
    # (admin writes a 503, the config poller a "db down") instead of hanging.
    connect_args = {"timeout": connect_timeout_s} if connect_timeout_s else {}
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size,
                               pool_pre_ping=True, pool_timeout=5, connect_args=connect_args)


class Database:
    """Owns the engine; `session()` is one unit of work that commits or rolls back."""

    def __init__(self, url: str, *, pool_size: int = 10,
                 connect_timeout_s: float | None = None) -> None:
        self.url = url
        self.engine = make_engine(url, pool_size=pool_size, connect_timeout_s=connect_timeout_s)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self.sessionmaker() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    async def dispose(self) -> None:
        await self.engine.dispose()
