"""A chat turn's call-log record says what the speech guard and the filler did (`speech`):
counts per action and lexicon and whether a filler was spoken, never the term; stored on
PostgreSQL, shown by the diagnostics reads and summed per configuration in the summary."""

from __future__ import annotations

import orjson

from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import CallRecord
from callout_server.calllog.service import DiagnosticsQueries
from callout_server.db.engine import Database
from tests.support.chat import chunks_of, collect, new_session, turn
from tests.support.guard import FINANCE, PLATFORM, Books, guarded_service, lexicon_book

TERMS = ("稳赚", "保本", "微信", "13800138000")


async def _turn_records(emulator, reply: str, **session) -> list[CallRecord]:
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": chunks_of(reply), "ttft_ms": 400}, times=1)
    h = await guarded_service(emulator, model, Books(lexicon_book(FINANCE, PLATFORM)))
    try:
        new_session(h, **session)
        await collect(turn(h, "t1", "a"))
        return list(h.recorder.records)
    finally:
        await h.close()


async def test_a_guarded_turns_record_counts_actions_lexicons_and_the_filler(emulator):
    records = await _turn_records(
        emulator, "稳赚。保本。加微信吧。电话13800138000。",
        guard={"lexicons": ["finance", "platform"], "mask_pii": True},
        filler={"after_ms": 100, "texts": ["请稍等。"]})
    [rec] = records
    assert rec.tier == "chat" and rec.code == "ok"
    assert rec.speech == {"guard": {"replace": 2, "drop": 1, "mask_pii": 1},
                          "lexicons": {"finance": 2, "platform": 1}, "filler": True}
    stored = orjson.dumps(rec.values(), default=str).decode()
    assert not any(term in stored for term in TERMS)  # never the term, nor the number


async def test_a_plain_turn_has_no_speech(emulator):
    [rec] = await _turn_records(emulator, "您好。我们明天联系您。")
    assert rec.speech is None


async def test_speech_is_stored_shown_and_summed_per_configuration(db: Database) -> None:
    recorder = DiagnosticsRecorder(db)
    await recorder.start()
    speeches = [({"guard": {"replace": 2}, "lexicons": {"finance": 2}, "filler": True}, 1),
                ({"guard": {"replace": 1, "mask_pii": 1}, "lexicons": {"finance": 1}}, 1),
                ({"filler": True}, 2), (None, 2)]
    ids = [recorder.record(CallRecord(tier="chat", code="ok", config_id=cfg, call_id=f"s{i}",
                                      latency_ms=5.0, speech=speech))
           for i, (speech, cfg) in enumerate(speeches)]
    await recorder.stop()  # COPY on PostgreSQL: the JSON column as its text
    queries = DiagnosticsQueries(db, recorder)
    page = await queries.page(limit=10, before_id=None, since=None, until=None, tier="chat")
    by_id = {item["id"]: item["speech"] for item in page["items"]}
    assert [by_id[i] for i in ids] == [s for s, _ in speeches]
    summary = (await queries.summary("1h"))["tiers"]["chat"]["speech"]
    assert summary["guard"] == {"replace": 3, "mask_pii": 1}
    assert summary["lexicons"] == {"finance": 3} and summary["fillers"] == 2
    assert summary["configs"] == [
        {"config_id": 1, "guard": {"replace": 3, "mask_pii": 1}, "lexicons": {"finance": 3},
         "fillers": 1},
        {"config_id": 2, "guard": {}, "lexicons": {}, "fillers": 1}]


async def test_a_tier_without_speech_has_empty_counts(db: Database) -> None:
    recorder = DiagnosticsRecorder(db)
    await recorder.start()
    recorder.record(CallRecord(tier="nlu", code="ok", latency_ms=3.0))
    await recorder.stop()
    tiers = (await DiagnosticsQueries(db, recorder).summary("1h"))["tiers"]
    assert tiers["nlu"]["speech"] == {"guard": {}, "lexicons": {}, "fillers": 0, "configs": []}


def test_the_csv_export_writes_speech_as_json() -> None:
    import csv
    import io

    from callout_server.calllog.export import csv_chunk
    speech = {"guard": {"replace": 1}, "lexicons": {"finance": 1}, "filler": True}
    text = csv_chunk([{"id": 1, "tier": "chat", "speech": speech, "redacted": {}}], header=True)
    [row] = list(csv.DictReader(io.StringIO(text[1:])))
    assert orjson.loads(row["speech"]) == speech and row["redacted"] == "{}"
