"""The daily usage summary: one row per (UTC day, tier, configuration, key, campaign,
currency), added to in the transaction that writes a batch of records.

    rows = rollup(batch)                          # pure: the batch summed per group
    await upsert_pg(driver, rows)                 # PostgreSQL (inside the COPY transaction)
    await upsert(session, rows)                   # any dialect (SQLite)

Why a rollup: `GET /api/admin/usage` over a month of a busy hub is millions of records; a
summary written with them answers it from a few hundred rows, whatever the log's size. Each
column only ever adds (`ON CONFLICT DO UPDATE SET calls = calls + excluded.calls`), so
workers writing the same row at once both count; rows are upserted in one fixed order so two
writers never wait on each other in a circle. Latency is kept as a histogram of fixed,
log-spaced buckets (`l00`..`l23`: 10 ms × 1.5^i), so p50 and p95 come without the records,
to within a bucket (interpolated inside it: a few per cent).

Only live traffic is summed (a shadow evaluation's replays are not usage); records of a
call that was cancelled (a barge-in) count as calls, not errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import BigInteger, Column, Date, Float, Integer, String, Table

from callout_server.calllog.records import CallRecord
from callout_server.db.base import SCHEMA, Base

BUCKETS = 24
BOUNDS_MS: tuple[float, ...] = tuple(10.0 * 1.5**i for i in range(BUCKETS - 1))  # last: beyond
LATENCY_COLUMNS = tuple(f"l{i:02d}" for i in range(BUCKETS))
GROUP_COLUMNS = ("day", "tier", "config_id", "key_id", "campaign", "currency")
SUM_COLUMNS = ("calls", "errors", "prompt_tokens", "completion_tokens", "reasoning_tokens",
               "cost", *LATENCY_COLUMNS)
NOT_ERRORS = frozenset({"ok", "cancelled"})


USAGE_DAILY = Table(
    "usage_daily", Base.metadata,
    Column("day", Date, primary_key=True),
    Column("tier", String(16), primary_key=True),
    Column("config_id", Integer, primary_key=True),  # 0: config.toml
    Column("key_id", Integer, primary_key=True),  # 0: no service key
    Column("campaign", String(64), primary_key=True),  # "": none
    Column("currency", String(8), primary_key=True),  # "": unpriced
    *(Column(c, BigInteger, nullable=False) for c in SUM_COLUMNS[:5]),
    Column("cost", Float, nullable=False),
    *(Column(c, Integer, nullable=False, server_default="0") for c in LATENCY_COLUMNS),
)


def bucket(latency_ms: float | None) -> int | None:
    if latency_ms is None:
        return None
    for i, bound in enumerate(BOUNDS_MS):
        if latency_ms <= bound:
            return i
    return BUCKETS - 1


def rollup(batch: Iterable[CallRecord]) -> list[dict[str, Any]]:
    """The batch summed per group, in the one order every writer upserts in."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec in batch:
        if rec.source != "live":
            continue
        group = (rec.at.date(), rec.tier, rec.config_id or 0, rec.key_id or 0,
                 rec.campaign or "", rec.currency or "")
        row = rows.get(group)
        if row is None:
            row = rows[group] = dict(zip(GROUP_COLUMNS, group, strict=True)) | dict.fromkeys(
                SUM_COLUMNS, 0)
            row["cost"] = 0.0
        row["calls"] += 1
        row["errors"] += rec.code not in NOT_ERRORS
        row["prompt_tokens"] += rec.prompt_tokens or 0
        row["completion_tokens"] += rec.completion_tokens or 0
        row["reasoning_tokens"] += rec.reasoning_tokens or 0
        row["cost"] += rec.cost or 0.0
        b = bucket(rec.latency_ms)
        if b is not None:
            row[LATENCY_COLUMNS[b]] += 1
    return [rows[k] for k in sorted(rows, key=lambda g: (g[0], *map(str, g[1:])))]


_COLUMNS = (*GROUP_COLUMNS, *SUM_COLUMNS)
PG_UPSERT = (
    f'INSERT INTO {SCHEMA}.usage_daily ({", ".join(_COLUMNS)}) '
    f'VALUES ({", ".join(f"${i + 1}" for i in range(len(_COLUMNS)))}) '
    f'ON CONFLICT ({", ".join(GROUP_COLUMNS)}) DO UPDATE SET '
    + ", ".join(f"{c} = usage_daily.{c} + EXCLUDED.{c}" for c in SUM_COLUMNS))


async def upsert_pg(driver: Any, rows: list[dict[str, Any]]) -> None:
    """On asyncpg's connection, inside the caller's transaction."""
    if rows:
        await driver.executemany(PG_UPSERT, [tuple(r[c] for c in _COLUMNS) for r in rows])


async def upsert(session: Any, rows: list[dict[str, Any]]) -> None:
    """Through SQLAlchemy (SQLite: the embedded default), in the caller's session."""
    if not rows:
        return
    from sqlalchemy.dialects.sqlite import insert

    table = USAGE_DAILY
    for row in rows:
        statement = insert(table).values(**row)
        await session.execute(statement.on_conflict_do_update(
            index_elements=list(GROUP_COLUMNS),
            set_={c: table.c[c] + statement.excluded[c] for c in SUM_COLUMNS}))
