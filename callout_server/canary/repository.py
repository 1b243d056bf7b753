"""SQL for canaries and for their figures over the call log; nothing here commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.canary.models import RUNNING, CanaryRow


class CanaryRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    # -- canaries ------------------------------------------------------------------------
    async def running(self) -> Sequence[CanaryRow]:
        return (await self.session.scalars(
            select(CanaryRow).where(CanaryRow.status == RUNNING))).all()

    async def running_in(self, tier: str) -> CanaryRow | None:
        return (await self.session.scalars(select(CanaryRow).where(
            CanaryRow.status == RUNNING, CanaryRow.tier == tier))).first()

    async def running_with(self, config_id: int) -> CanaryRow | None:
        return (await self.session.scalars(select(CanaryRow).where(
            CanaryRow.status == RUNNING, CanaryRow.candidate_id == config_id))).first()

    async def get(self, canary_id: int, *, for_update: bool = False) -> CanaryRow | None:
        stmt = select(CanaryRow).where(CanaryRow.id == canary_id)
        if for_update:
            stmt = stmt.with_for_update()
        return (await self.session.scalars(stmt)).one_or_none()

    async def recent(self, limit: int) -> Sequence[CanaryRow]:
        return (await self.session.scalars(
            select(CanaryRow).order_by(CanaryRow.id.desc()).limit(limit))).all()

    async def add(self, row: CanaryRow) -> CanaryRow:
        self.session.add(row)
        await self.session.flush()
        return row

    # -- figures from the call log (every worker's records) --------------------------------
    async def codes(self, tier: str, since: datetime, until: datetime | None,
                    ) -> list[tuple[str, str, int]]:
        """(variant, code, decisions) of live calls in the window."""
        q = (select(LLMCallLog.variant, LLMCallLog.code, func.count())
             .where(*_window(tier, since, until))
             .group_by(LLMCallLog.variant, LLMCallLog.code))
        return [(v, c, n) for v, c, n in (await self.session.execute(q)).all()]

    async def percentiles(self, tier: str, since: datetime, until: datetime | None,
                          ) -> dict[str, tuple[float | None, float | None]]:
        """variant -> (p50, p95) of the model calls' latency in the window."""
        where = (*_window(tier, since, until), LLMCallLog.latency_ms.is_not(None))
        if self.session.get_bind().dialect.name == "postgresql":
            q = (select(LLMCallLog.variant,
                        func.percentile_cont(0.5).within_group(LLMCallLog.latency_ms),
                        func.percentile_cont(0.95).within_group(LLMCallLog.latency_ms))
                 .where(*where).group_by(LLMCallLog.variant))
            return {v: (_ms(p50), _ms(p95)) for v, p50, p95 in (await self.session.execute(q))}
        values: dict[str, list[float]] = {}
        for v, ms in await self.session.execute(
                select(LLMCallLog.variant, LLMCallLog.latency_ms).where(*where)):
            values.setdefault(v, []).append(ms)
        return {v: (_quantile(sorted(xs), 0.5), _quantile(sorted(xs), 0.95))
                for v, xs in values.items()}

    async def intents(self, tier: str, since: datetime, until: datetime | None,
                      ) -> list[tuple[str, str | None, Any, int]]:
        """(variant, node_id, intent, decisions) of the model's own decisions (kept inputs)."""
        intent = NluCallInput.decision["intent"].as_string()
        q = (select(LLMCallLog.variant, LLMCallLog.node_id, intent, func.count())
             .join(NluCallInput, NluCallInput.id == LLMCallLog.id)
             .where(*_window(tier, since, until), LLMCallLog.code == "ok")
             .group_by(LLMCallLog.variant, LLMCallLog.node_id, intent))
        return [tuple(r) for r in (await self.session.execute(q)).all()]  # type: ignore[misc]


def _window(tier: str, since: datetime, until: datetime | None) -> list[Any]:
    out = [LLMCallLog.tier == tier, LLMCallLog.variant.in_(("active", "canary")),
           LLMCallLog.source == "live", LLMCallLog.at >= since]
    if until is not None:
        out.append(LLMCallLog.at <= until)
    return out


def _ms(value: Any) -> float | None:
    return None if value is None else round(float(value), 1)


def _quantile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (PostgreSQL's percentile_cont)."""
    if not values:
        return None
    pos = (len(values) - 1) * q
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return round(values[low] + (values[high] - values[low]) * (pos - low), 1)
