"""`callout-server redact-stored`: rows stored before redaction ran are redacted, with
progress; a second run finds nothing left and changes nothing (PostgreSQL, the command as
operators run it)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import orjson
from sqlalchemy import text

from callout_server.audit.models import AuditEvent
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.evaluation.models import Evaluation, EvaluationResult
from tests.fixtures.app import REPO_ROOT
from tests.fixtures.database import reset_tables
from tests.fixtures.database import test_env as worker_env
from tests.support.pii import leaks, structured_utterances

TABLES = ("llm_call_logs", "nlu_call_inputs", "evaluation_results", "audit_events")


async def _store_raw(db: Database, said: list[Any]) -> None:
    """Rows as a version before redaction wrote them: `redacted` NULL, values as said."""
    now = utcnow()
    async with db.session() as s:
        s.add(Evaluation(id=1, status="done", candidate_id=1, limit=1, total=1, done=1,
                         created_at=now))
        await s.flush()
        for i, u in enumerate(said, start=1):
            value = u.values[0].text
            s.add(LLMCallLog(id=i, at=now, tier="nlu", code="upstream_error", call_id=f"c{i}",
                             detail=f"bad prompt: {u.text}"))
            s.add(NluCallInput(id=i, at=now, call_id=f"c{i}", inputs={"utterance": u.text},
                               decision={"slots": {"contact": value}}))
            s.add(EvaluationResult(evaluation_id=1, input_id=i, at=now, call_id=f"c{i}",
                                   utterance=u.text, recorded_slots={"contact": value},
                                   recorded_fallback=False, recorded_code="ok",
                                   candidate_fallback=False, candidate_code="ok", agrees=True))
            s.add(AuditEvent(at=now, actor="a", via="token", action="x", target=f"call:{value}",
                             detail={"note": u.text}))


async def _dump(db: Database) -> str:
    out = []
    async with db.session() as s:
        for table in TABLES:
            rows = (await s.execute(text(f"SELECT * FROM callout.{table} ORDER BY id"))).mappings()
            out.append(orjson.dumps([dict(r) for r in rows.all()], default=str).decode())
    return "\n".join(out)


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callout_server", "redact-stored", "--batch", "3"],
                          env=env, cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=120)


async def test_redact_stored_is_rerunnable_and_shows_progress(pg_url, redis_url, redis_prefix) -> None:
    await reset_tables(pg_url)
    said = structured_utterances(7)
    db = Database(pg_url)
    try:
        await _store_raw(db, said)
        assert leaks(await _dump(db), said)  # the values are there, as said
        env = {"PATH": "/usr/bin:/bin", **worker_env(pg_url, None, redis_prefix)}
        first = await asyncio.to_thread(_run, env)
        assert first.returncode == 0, first.stderr
        lines = first.stdout.splitlines()
        assert "llm_call_logs: 3 rows redacted" in lines[0]
        assert any(line.startswith("llm_call_logs: 7 rows redacted (") for line in lines)
        assert lines[-1] == "done: 28 rows redacted"
        after = await _dump(db)
        assert leaks(after, said) == []
        async with db.session() as s:
            counts = (await s.execute(text(
                "SELECT redacted FROM callout.nlu_call_inputs ORDER BY id"))).scalars().all()
        assert all(c and sum(c.values()) >= 2 for c in counts)

        again = await asyncio.to_thread(_run, env)
        assert again.returncode == 0, again.stderr
        assert "llm_call_logs: nothing left to redact" in again.stdout
        assert again.stdout.splitlines()[-1] == "done: 0 rows redacted"
        assert await _dump(db) == after  # a card's pseudonym is not changed again
    finally:
        await db.dispose()
