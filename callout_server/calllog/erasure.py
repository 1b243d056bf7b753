"""Erasing one call: `DELETE /api/admin/calls/{call_id}` (admin), on every worker.

    erasure = CallErasure(writes, recorder, privacy)       # the composition root builds it
    erasure.also(EvaluationResult)                          # tables of floors above, by model
    erasure.on_local(chat.forget_calls)                     # what a worker holds in memory
    erasure.on_shared(forget)                               # what Redis holds (chat sessions)
    await erasure.erase(call_id, actor)                     # 204, or CallNotFound (404)

One transaction (a `LiveWrites` unit, so the cluster's generation moves with it) deletes every
stored row of the call: its call-log records, NLU inputs and decisions, and the rows of the
tables added with `also` (evaluation rows); the erasure's audit event (`call.erase`, target
`call:<call_id>`, no detail) commits with it. A call id is matched as said and as its
pseudonym (a call named by a phone number is stored redacted). While it runs, this worker's
call-log writer writes nothing, and its queued records of the call are dropped.

Every worker then drops what it holds in memory for that call (its chat session, its queued
records): the erasure is live state (`SECTION`, the recent `call.erase` events, read with
every snapshot), and each worker's snapshot listener calls `forget` with the erased ids.
Nothing stored of the call: 404 `call_not_found`, nothing written.

Another worker may have written records of the call after the delete and before the erasure
reached it (a batch it was writing then, or the second until its snapshot reloads). So each
worker, once it has dropped what it holds, deletes the call's rows once more (`sweep`), its
writer paused between batches: nothing of the call it wrote before it knew survives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.models import AuditEvent
from callout_server.audit.trail import Actor, record
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.db.base import utcnow
from callout_server.errors import NotFound
from callout_server.i18n import msg
from callout_server.privacy import Privacy

log = logging.getLogger(__name__)

ACTION = "call.erase"
# Erasures other workers still apply from the snapshot (longer than any reload takes).
RECENT = timedelta(minutes=10)


class CallNotFound(NotFound):
    code = "call_not_found"

    def __init__(self) -> None:  # never the id: it may be a phone number
        super().__init__(msg("call_not_found"))


Erased = Callable[[str | None], bool]


class Units(Protocol):
    """`config.live.LiveWrites`: a unit of work that moves the generation, and its commit;
    a plain one (`read`), which commits too and moves nothing."""

    def unit(self) -> AbstractAsyncContextManager[tuple[AsyncSession, int]]: ...

    def read(self) -> AbstractAsyncContextManager[AsyncSession]: ...

    async def committed(self, generation: int) -> None: ...


async def load_recent(session: AsyncSession) -> frozenset[str]:
    """The call ids erased lately, as stored (the snapshot's `erasures` section)."""
    rows = await session.scalars(select(AuditEvent.target).where(
        AuditEvent.action == ACTION, AuditEvent.at >= utcnow() - RECENT))
    return frozenset(t.removeprefix("call:") for t in rows if t)


class CallErasure:
    def __init__(self, writes: Units, recorder: DiagnosticsRecorder, privacy: Privacy) -> None:
        self._writes = writes
        self._recorder = recorder
        self._privacy = privacy
        self._tables: list[Any] = [LLMCallLog, NluCallInput]
        self._local: list[Callable[[Erased], int]] = [recorder.forget]
        self._shared: list[Callable[[frozenset[str]], Awaitable[int]]] = []
        self._applied: frozenset[str] = frozenset()
        self._sweeps: set[asyncio.Task[None]] = set()

    def also(self, table: Any) -> None:
        """A table of a floor above (a model with a `call_id` column) erased with the call."""
        self._tables.append(table)

    def on_local(self, forget: Callable[[Erased], int]) -> None:
        """What a worker holds of calls in memory: `forget(erased)` drops what the predicate
        `erased(call_id)` is true of, and returns how many."""
        self._local.append(forget)

    def on_shared(self, forget: Callable[[frozenset[str]], Awaitable[int]]) -> None:
        """What the workers share of calls outside the database (chat sessions in Redis):
        `await forget(keys)` drops it for the call ids `keys`, on the erasing worker."""
        self._shared.append(forget)

    def keys(self, call_id: str) -> frozenset[str]:
        stored, _ = self._privacy.text(call_id)
        return frozenset(k for k in (call_id, stored) if k)

    async def erase(self, call_id: str, actor: Actor) -> None:
        keys = self.keys(call_id)
        async with self._recorder.paused():
            held = self.forget(keys)
            for forget in self._shared:
                held += await forget(keys)
            async with self._writes.unit() as (session, generation):
                rows = await self._delete(session, keys)
                if not rows and not held:
                    raise CallNotFound()  # rolls the unit back: nothing written
                record(session, actor, ACTION, target=f"call:{call_id}")
        await self._writes.committed(generation)
        log.info("call erased: %d stored rows, %d held in memory", rows, held)

    def forget(self, keys: frozenset[str]) -> int:
        """Drop what this worker holds of the calls stored as `keys` (as said or redacted)."""
        def erased(call_id: str | None) -> bool:
            return call_id is not None and (call_id in keys or self._privacy.text(call_id)[0] in keys)

        return sum(forget(erased) for forget in self._local)

    async def _delete(self, session: AsyncSession, keys: frozenset[str]) -> int:
        rows = 0
        for table in self._tables:
            result = await session.execute(delete(table).where(table.call_id.in_(keys)))
            rows += int(result.rowcount or 0)  # type: ignore[attr-defined]
        return rows

    def apply(self, erased: frozenset[str]) -> None:
        """A snapshot's recent erasures (every worker): drop what memory holds of them, then
        sweep what this worker may have stored of them before it knew."""
        new = erased - self._applied
        self._applied = erased
        if new:
            self.forget(frozenset(new))
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a tool applying a snapshot): nothing was written
                return
            task = loop.create_task(self.sweep(frozenset(new)), name="call-erasure-sweep")
            self._sweeps.add(task)
            task.add_done_callback(self._sweeps.discard)

    async def sweep(self, keys: frozenset[str]) -> int:
        """Delete the erased calls' rows again, between two of this worker's batches; how many
        (0 on a failure, logged: the next erasure of the call, or its retention, removes them)."""
        try:
            async with self._recorder.paused():
                self.forget(keys)  # queued while the writer finished its batch
                async with self._writes.read() as session:
                    rows = await self._delete(session, keys)
        except Exception as exc:
            log.warning("call erasure: the sweep failed (%s); erase the call again",
                        type(exc).__name__)
            return 0
        if rows:
            log.info("call erasure: %d rows written before this worker knew, deleted", rows)
        return rows

    async def stop(self) -> None:
        for task in list(self._sweeps):
            task.cancel()
        if self._sweeps:
            await asyncio.wait(self._sweeps, timeout=2.0)


