"""Nothing stored keeps a customer's personal data; the live answer still carries it
(PostgreSQL, the real emulator; issue 22).

Utterances from tests/data/pii_corpus.py go through `POST /api/nlu/decide`, the model answers
slots holding the values, a vendor's 400 echoes the prompt; the rows written (call-log
records, NLU inputs and decisions, audit events) are read back and hold no value in any
spelling, and say what was replaced.
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import select, text

from callout_server.audit.models import AuditEvent
from callout_server.audit.trail import Actor, record
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.privacy import FAILED
from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, nlu_app
from tests.support.pii import leaks, structured_utterances

SLOTS = [{"name": "contact", "description": "客户留下的联系方式", "type": "string"}]


async def _dump(client: Any) -> str:
    """Every row of the tables holding customers' text, as one JSON text."""
    services = client.services
    await services.recorder.flush()
    out = []
    async with services.db.session() as s:
        for table in ("llm_call_logs", "nlu_call_inputs", "audit_events",
                      "evaluation_results"):
            rows = (await s.execute(text(f"SELECT * FROM callout.{table}"))).mappings().all()
            out.append(orjson.dumps([dict(r) for r in rows], default=str).decode())
    return "\n".join(out)


async def test_stored_rows_hold_no_personal_value_the_answer_does(
        make_settings, pg_url, emulator) -> None:
    said = structured_utterances(14)
    model = emulator.unique_model("qwen2.5-7b")
    for u in said:
        await emulator.script(model, {"content": answer("agree", 0.9, contact=u.values[0].text)},
                              times=1)
    echo = said[0].text
    await emulator.script(model, {"status": 400, "error_body": f'{{"error": "bad prompt: {echo}"}}'},
                          times=1)
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        for i, u in enumerate(said):
            # The dialer names one call by the callee's number: that is personal data too.
            call_id = "13800138000" if i == 0 else f"c-{i}"
            r, _ = await decide(client, call_id=call_id, utterance=u.text, slots=SLOTS,
                                context=[{"role": "user", "content": u.text}])
            assert r.status_code == 200, r.text
            # The live answer is the model's, as said.
            assert r.json()["slots"]["contact"] == u.values[0].text
        r, _ = await decide(client, call_id="c-echo", utterance=echo, fallback_intent="refuse")
        assert r.json()["fallback"] is True
        async with client.services.db.session() as s:
            record(s, Actor("admin", "token"), "test.note", target=f"call:{said[0].values[0].text}",
                   detail={"note": said[1].text})
        dump = await _dump(client)
        assert leaks(dump, said) == []
        assert "13800138000" not in dump

        services = client.services
        async with services.db.session() as s:
            logs = (await s.scalars(select(LLMCallLog).order_by(LLMCallLog.id))).all()
            inputs = (await s.scalars(select(NluCallInput).order_by(NluCallInput.id))).all()
            event = (await s.scalars(select(AuditEvent))).one()
        # What was replaced is on the record: its inputs and the answer's slot, per kind.
        first = logs[0]
        assert first.redacted is not None and first.redacted.get("mobile", 0) >= 2
        assert first.call_id != "13800138000" and len(first.call_id) == 11
        assert all(row.redacted is not None and FAILED not in row.redacted for row in logs)
        assert len(inputs) == len(said) + 1  # and the fallback decision
        assert inputs[0].redacted == {"mobile": 3}  # utterance, context, slot value
        # Same value, same pseudonym: the stored slot is the stored utterance's number.
        assert inputs[0].decision["slots"]["contact"] in inputs[0].inputs["utterance"]
        assert event.redacted == {"mobile": 1, "landline": 1}
        echoed = next(row for row in logs if row.detail and "bad prompt" in row.detail)
        assert echoed.redacted == {"mobile": 2}  # the vendor body, and its inputs

        # Ops read the counts with the record.
        r = await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                             params={"limit": 100})
        items = r.json()["items"]
        assert any(item["redacted"] and item["redacted"].get("mobile") for item in items)
        assert leaks(r.text, said) == []
