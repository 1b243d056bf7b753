"""Alembic environment for PostgreSQL (asyncpg) and the embedded SQLite file.

PostgreSQL: every table, the alembic version table included, lives in the schema
`callout`, created here when missing; an advisory lock lets several workers or
containers run `migrate` at the same time safely.
SQLite: the schema is translated away (`schema_translate_map`), so migrations are written
once with `schema="callout"` and run unchanged on both.

The database URL is the one it is handed (`callout_server.db.migrate.alembic_config`, used by
`callout-server migrate`, `callout-server alembic ...` and the embedded start-up); this
module reads no settings of its own.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from callout_server.db.base import SCHEMA, Base

# Arbitrary constant: the advisory lock key that serialises concurrent migrations.
_PG_MIGRATION_LOCK = 0x63616C6C  # "call"

config = context.config


def _url() -> str:
    url = config.attributes.get("url")
    if not url:
        raise SystemExit("no database URL was handed to the migrations: run them with "
                         "`callout-server migrate` or `callout-server alembic ...`")
    return str(url)


def _run(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        connection = connection.execution_options(schema_translate_map={SCHEMA: None})
    else:
        connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"'))
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        version_table_schema=None if sqlite else SCHEMA,
        include_schemas=not sqlite,
        render_as_batch=sqlite,  # SQLite cannot ALTER most things; batch mode recreates
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            await conn.run_sync(_run)
            await conn.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=Base.metadata, literal_binds=True,
                      version_table_schema=SCHEMA)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async())
