"""Async engine and session factory for PostgreSQL (asyncpg) or the embedded SQLite file.

`Database.session()` is the one unit of work, and the one place the driver's connection
failures are translated: whatever a unit of work meets when the database cannot serve it
(refused or silent connections, a pool that waits too long, a server starting up or shutting
down) leaves it as `DatabaseDown`, chained to the driver's exception; the web layer answers
it with 503 `database_unavailable` (`api/errors.py`), so no route needs its own try/except.
"""

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


class DatabaseDown(Exception):
    """The database cannot serve a unit of work now (the driver's exception is the cause)."""

    def __init__(self) -> None:
        super().__init__("database unavailable")


# SQLSTATEs of a server that is there but does not serve: class 08 (connection exception),
# 57P01-57P03 (terminated by a shutdown, crash or admin; "starting up" / "shutting down"),
# 53300 (too many connections).
_UNAVAILABLE_SQLSTATES = ("08", "57P01", "57P02", "57P03", "53300")


def _sqlstate(exc: BaseException) -> str | None:
    for candidate in (exc, getattr(exc, "orig", None), exc.__cause__):
        state = getattr(candidate, "sqlstate", None)
        if isinstance(state, str):
            return state
    return None


def is_db_unavailable(exc: BaseException) -> bool:
    """Connection-level failures (as opposed to constraint violations or bugs)."""
    if isinstance(exc, DatabaseDown):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, OperationalError | InterfaceError | PoolTimeout | OSError | TimeoutError):
        return True
    state = _sqlstate(exc)
    return state is not None and state.startswith(_UNAVAILABLE_SQLSTATES)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str, *, pool_size: int = 10, connect_timeout_s: float | None = None,
                statement_timeout_s: float | None = None) -> AsyncEngine:
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
    connect_args: dict[str, float] = {"timeout": connect_timeout_s} if connect_timeout_s else {}
    if statement_timeout_s:  # asyncpg's own, per statement: a silent server is a failure
        connect_args["command_timeout"] = statement_timeout_s
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size,
                               pool_pre_ping=True, pool_timeout=5, connect_args=connect_args)


class Database:
    """Owns the engine; `session()` is one unit of work that commits or rolls back."""

    def __init__(self, url: str, *, pool_size: int = 10, connect_timeout_s: float | None = None,
                 statement_timeout_s: float | None = None) -> None:
        self.url = url
        self.engine = make_engine(url, pool_size=pool_size, connect_timeout_s=connect_timeout_s,
                                  statement_timeout_s=statement_timeout_s)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """One unit of work: commits, or rolls back; a database that cannot serve it raises
        `DatabaseDown` (from the driver's exception)."""
        try:
            async with self.sessionmaker() as session:
                try:
                    yield session
                    await session.commit()
                except BaseException as exc:
                    try:
                        await session.rollback()
                    except Exception:
                        if not (isinstance(exc, Exception) and is_db_unavailable(exc)):
                            raise
                    raise
        except DatabaseDown:
            raise
        except Exception as exc:
            if is_db_unavailable(exc):
                raise DatabaseDown() from exc
            raise

    async def dispose(self) -> None:
        await self.engine.dispose()
