"""Redacting what was stored before redaction ran: `callout-server redact-stored`.

    await redact_stored(db, privacy, targets(), batch=500, progress=print)

Rows whose `redacted` is NULL (written before migration 0010_privacy, or while
`[privacy] redact = false`) are read in id order, `batch` at a time, redacted in a worker
thread, and written back with their `redacted` counts in one transaction per batch; a line
of progress per batch. Re-runnable: a row once redacted has `redacted` set and is not read
again (redacting twice would change a card's pseudonym), and a run stopped half-way resumes
where it stopped. Fail closed as the writer: a text the redactor fails on becomes NULL, a
JSON value `{}`; an NLU input row that fails is deleted (a replay needs it whole).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from callout_server.audit.models import AuditEvent
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.db.engine import Database
from callout_server.privacy import FAILED, Privacy, Tally, merge


@dataclass(frozen=True, slots=True)
class Target:
    table: Any  # a model with `id` and `redacted`
    texts: tuple[str, ...]
    values: tuple[str, ...] = ()  # JSON columns
    delete_failed: bool = False


CALL_LOG = Target(LLMCallLog, ("message", "advice", "detail", "call_id", "node_id"),
                  ("reason_args",))
NLU_INPUTS = Target(NluCallInput, ("call_id", "node_id"), ("inputs", "decision"),
                    delete_failed=True)
AUDIT = Target(AuditEvent, ("target",), ("detail",))
TARGETS = (CALL_LOG, NLU_INPUTS, AUDIT)  # the CLI adds the evaluation rows' Target


def _redact(rows: Sequence[Any], target: Target, privacy: Privacy
            ) -> list[tuple[int, dict[str, Any] | None]]:
    """(id, new values) per row; None: delete the row (it failed and cannot stay)."""
    out: list[tuple[int, dict[str, Any] | None]] = []
    for row in rows:
        values: dict[str, Any] = {}
        tally: Tally = {}
        for name in target.texts:
            values[name], found = privacy.text(getattr(row, name))
            merge(tally, found)
        for name in target.values:
            value, found = privacy.value(getattr(row, name))
            values[name] = {} if value is None and getattr(row, name) is not None else value
            merge(tally, found)
        if FAILED in tally and target.delete_failed:
            out.append((row.id, None))
            continue
        values["redacted"] = tally
        out.append((row.id, values))
    return out


async def redact_table(db: Database, privacy: Privacy, target: Target, *, batch: int = 500,
                       progress: Callable[[str], None] = print) -> tuple[int, Tally]:
    """Redact one table's rows not yet redacted; returns (rows, counts per kind)."""
    table, name = target.table, target.table.__tablename__
    after, rows_done, total = 0, 0, {}
    while True:
        async with db.session() as s:
            rows = (await s.scalars(select(table).where(table.redacted.is_(None), table.id > after)
                                    .order_by(table.id).limit(batch))).all()
            if not rows:
                break
            changes = await asyncio.to_thread(_redact, rows, target, privacy)
            for row_id, values in changes:
                if values is None:
                    await s.execute(delete(table).where(table.id == row_id))
                else:
                    await s.execute(update(table).where(table.id == row_id).values(**values))
                    merge(total, values["redacted"])
            after = rows[-1].id
            rows_done += len(rows)
        found = ", ".join(f"{kind} {n}" for kind, n in sorted(total.items())) or "nothing found"
        progress(f"{name}: {rows_done} rows redacted ({found})")
    return rows_done, total


async def redact_stored(db: Database, privacy: Privacy, targets: Sequence[Target] = TARGETS, *,
                        batch: int = 500, progress: Callable[[str], None] = print
                        ) -> dict[str, int]:
    """Every target table in turn; returns the rows redacted per table."""
    done: dict[str, int] = {}
    for target in targets:
        rows, _ = await redact_table(db, privacy, target, batch=batch, progress=progress)
        done[target.table.__tablename__] = rows
        if not rows:
            progress(f"{target.table.__tablename__}: nothing left to redact")
    return done
