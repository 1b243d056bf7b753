"""Retention per data class (`[privacy] retention_days`), purged in bounded batches
(PostgreSQL, the app's own services)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from callout_server.audit.models import AuditEvent
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.db.base import utcnow
from callout_server.evaluation.models import Evaluation, EvaluationResult
from tests.fixtures.app import running_app
from tests.fixtures.database import reset_tables

DAYS = {"nlu_inputs": 2, "call_log": 5, "evaluations": 3, "audit": 10}


def _rows(now: Any, ages: list[int]) -> dict[type, list[dict[str, Any]]]:
    log = [{"id": i + 1, "at": now - timedelta(days=d), "tier": "nlu", "code": "ok"}
           for i, d in enumerate(ages)]
    inputs = [{"id": i + 1, "at": now - timedelta(days=d), "inputs": {}, "decision": {}}
              for i, d in enumerate(ages)]
    results = [{"evaluation_id": 1, "input_id": i + 1, "at": now - timedelta(days=d),
                "recorded_fallback": False, "recorded_code": "ok", "candidate_fallback": False,
                "candidate_code": "ok", "agrees": True} for i, d in enumerate(ages)]
    audit = [{"at": now - timedelta(days=d * 2), "actor": "a", "via": "token", "action": "x",
              "detail": {}} for d in ages]
    return {LLMCallLog: log, NluCallInput: inputs, EvaluationResult: results, AuditEvent: audit}


async def _count(services: Any, table: Any) -> int:
    async with services.db.session() as s:
        return int(await s.scalar(select(func.count()).select_from(table)) or 0)


async def test_each_class_is_kept_its_own_days_in_small_batches(make_settings, pg_url) -> None:
    await reset_tables(pg_url)
    settings = make_settings(**{"privacy.retention_days": DAYS, "privacy.purge_batch": 2})
    async with running_app(settings) as client:
        services = client.services  # type: ignore[attr-defined]
        now = utcnow()
        ages = [0, 1, 4, 4, 4, 6, 6, 6, 6, 6]  # days old (audit: twice that)
        async with services.db.session() as s:
            s.add(Evaluation(id=1, status="done", candidate_id=1, limit=10, total=10, done=10,
                             created_at=now))
            await s.flush()
            for table, rows in _rows(now, ages).items():
                for row in rows:
                    s.add(table(**row))
        # Older than each class's days: call log > 5 (5 rows), inputs > 2 (8 rows),
        # evaluation rows > 3 (8 rows), audit > 10 (ages doubled: 5 rows).
        assert await services.recorder.purge_expired() == 5 + 8
        assert await services.evaluations.purge() == 8
        assert await services.audit.purge_expired() == 5
        assert [await _count(services, t) for t in
                (LLMCallLog, NluCallInput, EvaluationResult, AuditEvent)] == [5, 2, 2, 5]
        assert await services.recorder.purge_expired() == 0  # re-runnable: nothing left
