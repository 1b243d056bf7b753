"""Fail closed: a text the redactor fails on is not stored, never stored as it was; the
record says `redaction_failed` (PostgreSQL and SQLite: the two write paths)."""

from __future__ import annotations

from sqlalchemy import select

from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.models import LLMCallLog, NluCallInput
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord
from callout_server.db.engine import Database
from callout_server.privacy import FAILED, Privacy
from callout_server.redaction import RedactionError, Redactor
from callout_server.tiers.nlu.schemas import DecideRequest

PHONE = "13872837651"


class Failing(Redactor):
    """Raises on any text holding BOOM, as a bug or an oversized text would."""

    def redact(self, text: str):  # type: ignore[override]
        if "BOOM" in text:
            raise RedactionError("test")
        return super().redact(text)


def failing_privacy() -> Privacy:
    p = Privacy("k" * 32)
    p._redactor = Failing("k" * 32)
    return p


def _request(utterance: str) -> DecideRequest:
    return DecideRequest.model_validate({
        "call_id": "c1", "node_id": "n1", "utterance": utterance,
        "intents": [{"name": "agree", "description": "同意"}]})


async def test_a_text_that_fails_is_not_stored(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, privacy=failing_privacy())
    await recorder.start()
    try:
        bad = CallRecord(tier="nlu", code="upstream_error", call_id="c1",
                         detail=f"vendor said BOOM: {PHONE}",
                         inputs=NluInputs(_request(f"BOOM {PHONE}"), {"intent": "agree"}, 12.0))
        good = CallRecord(tier="nlu", code="ok", call_id="c2",
                          inputs=NluInputs(_request(f"电话{PHONE}"),
                                           {"intent": "agree", "slots": {"p": PHONE}}, 9.0))
        recorder.record(bad)
        recorder.record(good)
        await recorder.flush()
    finally:
        await recorder.stop()
    async with calllog_db.session() as s:
        rows = {r.call_id: r for r in (await s.scalars(select(LLMCallLog))).all()}
        inputs = (await s.scalars(select(NluCallInput))).all()
    failed = rows["c1"]
    assert failed.detail is None and failed.redacted == {FAILED: 2}
    # Its inputs failed too: no row of them at all, rather than one stored as said.
    assert [i.call_id for i in inputs] == ["c2"]
    assert PHONE not in str(inputs[0].inputs) and PHONE not in str(inputs[0].decision)
    assert rows["c2"].redacted == {"mobile": 2} and inputs[0].redacted == {"mobile": 2}


async def test_a_record_is_redacted_once_even_when_its_write_is_retried(
        calllog_db: Database) -> None:
    """A write that fails after redaction keeps the redacted batch: a retry does not redact
    it again (a card's pseudonym would change)."""
    recorder = DiagnosticsRecorder(calllog_db, privacy=Privacy("k" * 32))
    real, calls = recorder._insert, []

    async def flaky(batch: list[CallRecord]) -> None:
        calls.append([r.detail for r in batch])
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        await real(batch)

    recorder._insert = flaky  # type: ignore[method-assign]
    recorder.record(CallRecord(tier="nlu", code="upstream_error", call_id="c1",
                               detail="card 6222021036129701788"))
    try:
        await recorder.flush()
    except ConnectionError:
        pass
    await recorder.flush()
    assert calls[0] == calls[1] and "6222021036129701788" not in calls[0][0]
    async with calllog_db.session() as s:
        row = (await s.scalars(select(LLMCallLog))).one()
    assert row.detail == calls[0][0] and row.redacted == {"bank_card": 1}


async def test_the_thread_and_the_sliced_loop_redact_alike() -> None:
    from callout_server.calllog.redact import prepare

    def records() -> list[CallRecord]:
        return [CallRecord(tier="nlu", code="ok", call_id=f"c{i}", detail=f"号码{PHONE}",
                           inputs=NluInputs(_request(f"电话{PHONE}"), {"intent": "agree"}, 1.0))
                for i in range(40)]

    privacy = Privacy("k" * 32)
    threaded, sliced = records(), records()
    await prepare(threaded, privacy, in_thread=True)
    await prepare(sliced, privacy, in_thread=False)
    assert [(r.detail, r.input_values, r.redacted) for r in threaded] == [
        (r.detail, r.input_values, r.redacted) for r in sliced]
    assert all(PHONE not in (r.detail or "") and r.redacted == {"mobile": 2} for r in sliced)
    await prepare(sliced, privacy)  # once redacted, never again
    assert [r.detail for r in sliced] == [r.detail for r in threaded]
