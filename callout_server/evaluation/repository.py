"""SQL of shadow evaluation: recorded inputs to replay, evaluations and their results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.calllog.models import NluCallInput
from callout_server.evaluation.models import Evaluation, EvaluationResult


async def recent_input_ids(s: AsyncSession, *, since: datetime | None, node_id: str | None,
                           limit: int) -> list[int]:
    """The most recent recorded decisions matching the filter, newest first."""
    q = select(NluCallInput.id).order_by(NluCallInput.id.desc()).limit(limit)
    if since is not None:
        q = q.where(NluCallInput.at >= since)
    if node_id is not None:
        q = q.where(NluCallInput.node_id == node_id)
    return list((await s.scalars(q)).all())


async def recorded_nodes(s: AsyncSession, *, limit: int) -> list[tuple[str, int]]:
    """The nodes recorded NLU calls can be replayed for, busiest first, with their counts."""
    q = (select(NluCallInput.node_id, func.count()).where(NluCallInput.node_id.is_not(None))
         .group_by(NluCallInput.node_id).order_by(func.count().desc(), NluCallInput.node_id)
         .limit(limit))
    return [(node, int(n)) for node, n in (await s.execute(q)).all()]


async def inputs(s: AsyncSession, ids: Sequence[int]) -> list[Any]:
    """The recorded inputs with these ids, in that order, as rows with attribute access
    (plain rows, not ORM objects: these reads share the event loop with live calls)."""
    table = NluCallInput.__table__
    rows = (await s.execute(select(table).where(table.c.id.in_(ids)))).all()
    order = {i: n for n, i in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r.id])


async def get(s: AsyncSession, evaluation_id: int) -> Evaluation | None:
    return await s.get(Evaluation, evaluation_id)


async def running_with(s: AsyncSession, config_id: int) -> Evaluation | None:
    q = select(Evaluation).where(Evaluation.status == "running",
                                 Evaluation.candidate_id == config_id)
    return (await s.scalars(q)).first()


async def recent(s: AsyncSession, limit: int) -> list[Evaluation]:
    q = select(Evaluation).order_by(Evaluation.id.desc()).limit(limit)
    return list((await s.scalars(q)).all())


async def add_results(s: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:  # one executemany, no unit of work: ~10x cheaper than ORM objects
        await s.execute(insert(EvaluationResult), rows)


async def report(s: AsyncSession, evaluation_id: int, *, done: int, now: datetime) -> bool:
    """Progress and heartbeat of a running evaluation; True when a cancel was asked for."""
    result = await s.execute(
        update(Evaluation).where(Evaluation.id == evaluation_id)
        .values(done=done, heartbeat_at=now).returning(Evaluation.cancel_requested))
    return bool(result.scalar_one_or_none())


async def finish(s: AsyncSession, evaluation_id: int, *, status: str, reason: str | None,
                 done: int, summary: dict[str, Any] | None, now: datetime) -> None:
    await s.execute(
        update(Evaluation).where(Evaluation.id == evaluation_id, Evaluation.status == "running")
        .values(status=status, reason=reason, done=done, summary=summary, finished_at=now,
                heartbeat_at=now))


# What the summary reads of each result: plain columns, no customer text, no ORM objects
# (a thousand ORM rows cost ~50 ms of the event loop that live calls share; tuples ~3 ms).
_STATS = tuple(getattr(EvaluationResult, name) for name in (
    "node_id", "recorded_fallback", "recorded_code", "recorded_latency_ms",
    "candidate_fallback", "candidate_code", "candidate_latency_ms", "prompt_tokens",
    "completion_tokens", "reasoning_tokens", "intent_agrees", "slots_agree", "agrees"))


async def result_stats(s: AsyncSession, evaluation_id: int) -> Sequence[Any]:
    """The summary's columns of every result, as rows with attribute access."""
    q = select(*_STATS).where(EvaluationResult.evaluation_id == evaluation_id)
    return (await s.execute(q)).all()


async def disagreements(s: AsyncSession, evaluation_id: int, *, after: int | None, limit: int,
                        node_id: str | None) -> list[EvaluationResult]:
    """Keyset pages of the calls that disagree, in replay order."""
    q = (select(EvaluationResult)
         .where(EvaluationResult.evaluation_id == evaluation_id,
                EvaluationResult.agrees.is_(False))
         .order_by(EvaluationResult.id).limit(limit))
    if after is not None:
        q = q.where(EvaluationResult.id > after)
    if node_id is not None:
        q = q.where(EvaluationResult.node_id == node_id)
    return list((await s.scalars(q)).all())


async def fail_interrupted(s: AsyncSession, *, owner: str, stale_before: datetime,
                           reason: str, now: datetime) -> list[int]:
    """Mark failed what runs no more: started by this worker's previous life (`owner`), or
    silent since `stale_before`. Returns their ids."""
    result = await s.execute(
        update(Evaluation)
        .where(Evaluation.status == "running",
               or_(Evaluation.owner == owner, Evaluation.heartbeat_at < stale_before))
        .values(status="failed", reason=reason, finished_at=now)
        .returning(Evaluation.id))
    return list(result.scalars().all())


async def request_cancel(s: AsyncSession, evaluation_id: int) -> None:
    await s.execute(update(Evaluation).where(Evaluation.id == evaluation_id,
                                             Evaluation.status == "running")
                    .values(cancel_requested=True))
