"""NLU inputs kept with the call log for shadow evaluation (PostgreSQL, the real emulator).

What a decision was asked and answered lands in `callout.nlu_call_inputs` beside its last
call-log record, written by the batched writer; `[calllog] nlu_inputs_days` bounds how long
(0 keeps none); replays are recorded as `source: "evaluation"` and never kept as inputs nor
counted in the diagnostics summary.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import func, select, update

from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.calllog.records import CallRecord
from callout_server.db.base import utcnow
from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, decide_body, nlu_app


async def inputs(client: httpx.AsyncClient) -> list[NluCallInput]:
    services = client.services  # type: ignore[attr-defined]
    await services.recorder.flush()
    async with services.db.session() as s:
        return list((await s.scalars(select(NluCallInput).order_by(NluCallInput.id))).all())


async def log_ids(client: httpx.AsyncClient, **where: Any) -> list[int]:
    services = client.services  # type: ignore[attr-defined]
    async with services.db.session() as s:
        q = select(LLMCallLog.id).order_by(LLMCallLog.id)
        for column, value in where.items():
            q = q.where(getattr(LLMCallLog, column) == value)
        return list((await s.scalars(q)).all())


async def test_a_decision_keeps_its_inputs_and_answer_beside_its_last_record(
        make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree", 0.9, time="明天下午三点以后")}, times=1)
    # then: a non-JSON answer (the model's answer: not retried elsewhere), then a 400
    await emulator.script(model, {"content": "嗯"}, times=1)
    await emulator.script(model, {"status": 400}, times=1)
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        overrides = {"max_tokens": 120, "temperature": 0}
        r, _ = await decide(client, call_id="c1", instructions="只判断是否同意",
                            overrides=overrides, deadline_ms=3000)
        assert r.status_code == 200 and r.json()["intent"] == "agree"
        r, _ = await decide(client, call_id="c2", fallback_intent="refuse")
        assert r.json()["fallback"] is True and r.json()["diagnostic"]["code"] == "invalid_json"
        r, _ = await decide(client, call_id="c3")  # no fallback: a 502, no decision to keep
        assert r.status_code == 502
        rows = await inputs(client)
        c2_attempts = await log_ids(client, call_id="c2")

    assert [x.call_id for x in rows] == ["c1", "c2"]
    ok, fell_back = rows
    sent = decide_body()
    assert ok.inputs == {
        "utterance": sent["utterance"], "context": sent["context"], "intents": sent["intents"],
        "slots": [{"name": "time", "description": "客户方便的时间"}],
        "instructions": "只判断是否同意", "overrides": overrides, "deadline_ms": 3000}
    assert ok.decision == {"intent": "agree", "slots": {"time": "明天下午三点以后"},
                           "fallback": False, "code": "ok", "confidence": 0.9}
    assert (ok.node_id, ok.model, ok.latency_ms is not None) == ("confirm_time", model, True)
    # The fallback decision rides on the call's one record.
    assert len(c2_attempts) == 1 and fell_back.id == c2_attempts[-1]
    assert fell_back.inputs["fallback_intent"] == "refuse"
    assert fell_back.decision == {"intent": "refuse", "slots": {"time": None}, "fallback": True,
                                  "code": "invalid_json", "confidence": None}


async def test_model_text_with_nul_is_stored_replaced(make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": '{"intent": "agree", "slots": {"time": "三点\\u0000后"}}'})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        r, _ = await decide(client)
        assert r.status_code == 200 and r.json()["slots"]["time"] == "三点\x00后"
        [row] = await inputs(client)
    assert row.decision["slots"] == {"time": "三点\ufffd后"}


async def test_zero_days_keeps_no_inputs(make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with nlu_app(make_settings, pg_url, emulator, model,
                       **{"calllog.nlu_inputs_days": 0}) as client:
        assert not client.services.recorder.keeps_nlu_inputs  # type: ignore[attr-defined]
        assert (await decide(client))[0].status_code == 200
        assert await inputs(client) == []
        assert len(await log_ids(client)) == 1  # the call log itself is kept


async def test_inputs_are_purged_by_their_own_days_with_the_log(
        make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with nlu_app(make_settings, pg_url, emulator, model,
                       **{"calllog.nlu_inputs_days": 2}) as client:
        services = client.services  # type: ignore[attr-defined]
        for i in range(3):
            assert (await decide(client, call_id=f"p{i}"))[0].status_code == 200
        await inputs(client)
        async with services.db.session() as s:  # p0 three days old, p1 one day old
            for call_id, days in (("p0", 3), ("p1", 1)):
                for table in (NluCallInput, LLMCallLog):
                    await s.execute(update(table).where(table.call_id == call_id)
                                    .values(at=utcnow() - timedelta(days=days)))
        await services.recorder.purge_expired()
        assert [x.call_id for x in await inputs(client)] == ["p1", "p2"]
        assert len(await log_ids(client)) == 3  # records live for retention_days (30)


async def test_replays_are_no_traffic(make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        services = client.services  # type: ignore[attr-defined]
        assert (await decide(client, call_id="live-1"))[0].status_code == 200
        from callout_server.tiers.nlu.schemas import DecideRequest

        cfg = services.store.current.config_for("nlu")
        outcome = await services.nlu.replay(DecideRequest(**decide_body(call_id="live-1")), cfg)
        assert outcome.code == "ok" and outcome.decision.intent == "agree"
        assert outcome.tokens.prompt_tokens and outcome.tokens.completion_tokens
        services.recorder.record(CallRecord(tier="nlu", code="timeout", source="evaluation",
                                            latency_ms=5000.0))
        assert len(await inputs(client)) == 1  # the replay kept none
        assert len(await log_ids(client, source="evaluation")) == 2
        summary = (await client.get("/api/admin/diagnostics/summary",
                                    headers=ADMIN_HEADERS)).json()
        assert summary["tiers"]["nlu"]["count"] == 1
        assert summary["tiers"]["nlu"]["codes"] == {"ok": 1}
        listed = (await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                                   params={"source": "evaluation"})).json()["items"]
        assert [(x["source"], x["call_id"]) for x in listed] == [
            ("evaluation", None), ("evaluation", "live-1")]
        async with services.db.session() as s:
            assert await s.scalar(select(func.count()).select_from(LLMCallLog)) == 3


async def test_both_write_paths_store_inputs_and_make_any_text_storable(calllog_db) -> None:
    """PostgreSQL's COPY and SQLite's INSERT; a request built around validation (NUL, a lone
    surrogate) is stored with U+FFFD in their place rather than failing the batch."""
    from callout_server.calllog.inputs import NluInputs
    from callout_server.calllog.recorder import DiagnosticsRecorder
    from callout_server.tiers.nlu.schemas import DecideRequest, Intent

    good = DecideRequest(**decide_body())
    odd = DecideRequest.model_construct(
        utterance="好\x00的", intents=[Intent.model_construct(name="agree", description="\ud800")],
        context=[], slots=[], fallback_intent=None)
    decision = {"intent": "agree", "slots": {"time": "x\x00"}, "fallback": False, "code": "ok",
                "confidence": None}
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.05)
    await recorder.start()
    try:
        for i, req in enumerate((good, odd)):
            recorder.record(CallRecord(tier="nlu", code="ok", call_id=f"w{i}",
                                       inputs=NluInputs(req, decision, 12.0)))
        await recorder.flush()
        async with calllog_db.session() as s:
            rows = list((await s.scalars(select(NluCallInput).order_by(NluCallInput.id))).all())
    finally:
        await recorder.stop()
    assert [r.call_id for r in rows] == ["w0", "w1"] and recorder.rejected == 0
    assert rows[0].inputs["utterance"] == good.utterance
    assert rows[1].inputs["utterance"] == "好\ufffd的"
    assert rows[1].inputs["intents"] == [{"name": "agree", "description": "\ufffd"}]
    assert rows[1].decision["slots"] == {"time": "x\ufffd"} and rows[1].latency_ms == 12.0
