"""Erasing one call (`DELETE /api/admin/calls/{call_id}`, admins) and who reads evaluation
disagreements (issue 21 item 13), on PostgreSQL; a worker that learns of an erasure late
deletes what it wrote of the call meanwhile; the chat session of an erased call goes on every
worker (two `serve` processes)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import func, select

from callout_server.audit.models import AuditEvent
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.calllog.records import CallRecord
from callout_server.db.base import utcnow
from callout_server.evaluation.models import Evaluation, EvaluationResult
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS

PHONE_CALL = "13872837651"  # a dialer that names the call by the callee's number


async def _count(services: Any, table: Any, call_id: str | None = None) -> int:
    async with services.db.session() as s:
        q = select(func.count()).select_from(table)
        if call_id is not None:
            q = q.where(table.call_id == call_id)
        return int(await s.scalar(q) or 0)


async def test_erasure_removes_every_row_of_the_call_and_is_audited(
        app_client: httpx.AsyncClient, people: Any, emulator: Any) -> None:
    services = app_client.services  # type: ignore[attr-defined]
    for call_id in ("c-erase", "c-keep", PHONE_CALL):
        services.recorder.record(CallRecord(tier="nlu", code="ok", call_id=call_id))
    await services.recorder.flush()
    async with services.db.session() as s:
        s.add(Evaluation(id=1, status="done", candidate_id=1, limit=1, total=1, done=1,
                         created_at=utcnow()))
        await s.flush()
        for call_id in ("c-erase", "c-keep"):
            s.add(EvaluationResult(evaluation_id=1, input_id=1, at=utcnow(), call_id=call_id,
                                   recorded_fallback=False, recorded_code="ok",
                                   candidate_fallback=False, candidate_code="ok", agrees=False))
            s.add(NluCallInput(id=hash(call_id) % 10**9, at=utcnow(), call_id=call_id,
                               inputs={}, decision={}))
    r = await app_client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": "c-erase", "system_prompt": "你是客服"})
    assert r.status_code == 201, r.text
    queued = CallRecord(tier="nlu", code="ok", call_id="c-erase")
    services.recorder.record(queued)  # not written yet: it must never be

    r = await app_client.delete("/api/admin/calls/c-erase", headers=ADMIN_HEADERS)
    assert r.status_code == 204, r.text
    await services.recorder.flush()
    for table in (LLMCallLog, NluCallInput, EvaluationResult):
        assert await _count(services, table, "c-erase") == 0, table
        assert await _count(services, table, "c-keep") == 1, table
    r = await app_client.get("/api/chat/sessions/c-erase", headers=SERVICE_HEADERS)
    assert r.status_code == 404
    async with services.db.session() as s:
        event = (await s.scalars(select(AuditEvent).where(AuditEvent.action == "call.erase"))).one()
    assert (event.target, event.detail, event.actor) == ("call:c-erase", {}, "admin-token")

    # Again: nothing is stored any more -> 404 with a stable code, nothing audited.
    for lang, word in (("en", "nothing is stored"), ("zh", "没有这通电话")):
        r = await app_client.delete("/api/admin/calls/c-erase",
                                    headers={**ADMIN_HEADERS, "Accept-Language": lang})
        assert r.status_code == 404 and r.json()["error"]["code"] == "call_not_found"
        assert word in r.json()["error"]["message"]
    assert await _count(services, AuditEvent) == 1

    # A call named by a phone number is stored redacted, and still erased by its number;
    # the trail keeps the pseudonym, never the number.
    assert await _count(services, LLMCallLog, PHONE_CALL) == 0
    r = await app_client.delete(f"/api/admin/calls/{PHONE_CALL}", headers=ADMIN_HEADERS)
    assert r.status_code == 204
    assert await _count(services, LLMCallLog) == 1  # c-keep
    async with services.db.session() as s:
        targets = (await s.scalars(select(AuditEvent.target))).all()
    assert len(targets) == 2 and not any(PHONE_CALL in (t or "") for t in targets)

    # Admins only; a console session needs the CSRF header as on every unsafe route.
    for role in ("viewer", "operator"):
        c = await people.as_role(role)
        r = await c.delete("/api/admin/calls/c-keep")
        assert r.status_code == 403
    admin = await people.as_role("admin")
    r = await admin.delete("/api/admin/calls/c-keep", headers={"X-CSRF-Token": "wrong"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    r = await admin.delete("/api/admin/calls/c-keep")
    assert r.status_code == 204


async def test_a_worker_that_learns_of_an_erasure_late_sweeps_what_it_wrote(
        app_client: httpx.AsyncClient) -> None:
    from callout_server.calllog.erasure import CallErasure

    services = app_client.services  # type: ignore[attr-defined]
    erasure = services.components[CallErasure]
    # Written by this worker after another one had erased the call (it did not know yet),
    # one more still queued, and a call nobody erased.
    for call_id in ("c-late", "c-late", "c-other"):
        services.recorder.record(CallRecord(tier="nlu", code="ok", call_id=call_id))
    await services.recorder.flush()
    services.recorder.record(CallRecord(tier="nlu", code="ok", call_id="c-late"))
    assert await _count(services, LLMCallLog, "c-late") == 2

    erasure.apply(frozenset({"c-late"}))  # the erasure reaches this worker's snapshot
    for _ in range(200):
        if await _count(services, LLMCallLog, "c-late") == 0:
            break
        await asyncio.sleep(0.02)
    await services.recorder.flush()
    assert await _count(services, LLMCallLog, "c-late") == 0
    assert await _count(services, LLMCallLog, "c-other") == 1
    assert await erasure.sweep(frozenset({"c-late"})) == 0  # nothing left to find


async def test_viewers_read_no_disagreements(app_client: httpx.AsyncClient, people: Any) -> None:
    services = app_client.services  # type: ignore[attr-defined]
    async with services.db.session() as s:
        s.add(Evaluation(id=7, status="done", candidate_id=1, limit=1, total=1, done=1,
                         created_at=utcnow(), summary={"calls": 1}))
        await s.flush()
        s.add(EvaluationResult(evaluation_id=7, input_id=1, at=utcnow(), call_id="c1",
                               utterance="明天下午三点以后", recorded_fallback=False,
                               recorded_code="ok", candidate_fallback=False,
                               candidate_code="ok", agrees=False))
    viewer, operator = await people.as_role("viewer"), await people.as_role("operator")
    r = await viewer.get("/api/admin/evaluations/7")
    assert r.status_code == 200 and r.json()["summary"] == {"calls": 1}
    assert r.json()["disagreements"] is None and "三点" not in r.text
    r = await viewer.get("/api/admin/evaluations/7/disagreements")
    assert r.status_code == 403
    r = await operator.get("/api/admin/evaluations/7")
    assert r.json()["disagreements"][0]["utterance"] == "明天下午三点以后"
    r = await operator.get("/api/admin/evaluations/7/disagreements")
    assert r.status_code == 200 and len(r.json()["items"]) == 1


async def test_the_chat_session_goes_on_every_worker(start_worker: Any, emulator: Any) -> None:
    a = await start_worker("a")
    b = await start_worker("b")
    async with httpx.AsyncClient(timeout=30) as client:
        r = await client.post(f"{b.url}/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": "c-both", "system_prompt": "你是客服"})
        assert r.status_code == 201
        # Worker a wrote a record of the call (a decision through its NLU tier).
        r = await client.post(f"{a.url}/api/nlu/decide", headers=SERVICE_HEADERS,
                              json={"call_id": "c-both", "utterance": "好的",
                                    "intents": [{"name": "agree"}], "fallback_intent": "agree"})
        assert r.status_code == 200
        for _ in range(100):  # the record is written within the writer's interval
            r = await client.delete(f"{a.url}/api/admin/calls/c-both", headers=ADMIN_HEADERS)
            if r.status_code == 204:
                break
            await asyncio.sleep(0.1)
        assert r.status_code == 204, r.text
        for _ in range(50):  # within a second through Redis
            r = await client.get(f"{b.url}/api/chat/sessions/c-both", headers=SERVICE_HEADERS)
            if r.status_code == 404:
                break
            await asyncio.sleep(0.05)
        assert r.status_code == 404


