"""Records the database would refuse: cleaned when handed over, isolated and dropped if still refused.

PostgreSQL refuses a NUL byte, a lone surrogate and an over-long string that SQLite takes; a
duplicate id is refused by both. One such record must never stall the writer (it used to
retry the same batch forever) nor take the good records of its batch down with it.
"""

from __future__ import annotations

import math

from prometheus_client import REGISTRY

from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import COLUMNS, TEXT_LIMITS, CallRecord
from callout_server.calllog.refusals import is_refused_data
from callout_server.db.engine import Database
from callout_server.validation import REPLACEMENT
from tests.fixtures.calllog import stored, wait_until
from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, nlu_app

NUL = "\x00"


def rejected_total() -> float:
    return REGISTRY.get_sample_value("callout_diagnostics_rejected_total") or 0.0


def test_clean_makes_every_column_storable() -> None:
    text_columns = {name: f"{name}{NUL}\ud800" + "y" * 3000 for name in TEXT_LIMITS}
    rec = CallRecord(**text_columns, latency_ms=math.nan, ttft_ms=math.inf,
                     prompt_tokens=2**40, completion_tokens=-(2**31) - 1, status=500).clean()
    for name, limit in TEXT_LIMITS.items():
        value = getattr(rec, name)
        assert NUL not in value and "\ud800" not in value, name
        # (a short column, `currency`, holds its name and no more)
        assert value.startswith(f"{name}{REPLACEMENT}{REPLACEMENT}"[:limit]), name
        assert len(value) == limit, name
    assert TEXT_LIMITS["call_id"] == 200 and TEXT_LIMITS["message"] == 2000
    assert (rec.latency_ms, rec.ttft_ms) == (None, None)
    assert (rec.prompt_tokens, rec.completion_tokens, rec.status) == (None, None, 500)
    # Ordinary values, Chinese text included, pass unchanged.
    ok = CallRecord(tier="nlu", code="ok", message="模型返回内容为空", call_id="c-1",
                    latency_ms=12.5, prompt_tokens=2**31 - 1).clean()
    assert (ok.message, ok.call_id, ok.latency_ms, ok.prompt_tokens) == (
        "模型返回内容为空", "c-1", 12.5, 2**31 - 1)


def test_a_report_s_configuration_text_is_made_storable_once_and_the_rest_per_record() -> None:
    """`to_record` takes the configuration's text cleaned once per configuration (and marks
    the record so `clean()` skips it); what a caller or a vendor sent is cleaned per record."""
    from callout_server.calllog.reports import to_record
    from callout_server.llm import Diagnostic, LLMConfig
    from callout_server.upstream import CallReport

    cfg = LLMConfig(tier="nlu", name="odd", base_url="http://127.0.0.1:9/v1",
                    model=f"m{NUL}\ud800" + "x" * 300, id=3)
    diagnostic = Diagnostic.make("upstream_error", "en", status=502,
                                 detail=f"bad{NUL}" + "d" * 3000, finish_reason=f"f{NUL}")
    report = CallReport(cfg, f"http://h{NUL}/v1", 1, f"v{NUL}" + "v" * 50, diagnostic, 3.0)
    for _ in range(2):  # cleaned the first time, taken from the cache the second
        rec = to_record(report, "nlu", call_id=f"c{NUL}" + "c" * 300, node_id="n\ud800").clean()
        assert rec.static_clean
        assert rec.model == f"m{REPLACEMENT}{REPLACEMENT}" + "x" * 197
        assert rec.vendor == f"v{REPLACEMENT}" + "v" * 38
        assert rec.endpoint == f"http://h{REPLACEMENT}/v1"
        assert rec.call_id == f"c{REPLACEMENT}" + "c" * 198
        assert rec.node_id == f"n{REPLACEMENT}"
        assert rec.detail is not None and rec.detail.startswith(f"bad{REPLACEMENT}")
        assert len(rec.detail) == TEXT_LIMITS["detail"]
        assert rec.finish_reason == f"f{REPLACEMENT}"
        assert (rec.tier, rec.code, rec.source) == ("nlu", "upstream_error", "live")
    # A record built by hand is cleaned whole, whatever the cache holds.
    assert CallRecord(tier="nlu", code="ok", model=cfg.model).clean().model == rec.model
    assert rec.values() == tuple(rec.row()[name] for name in COLUMNS)


def test_a_decision_s_json_is_storable_the_fast_way_or_the_slow_one() -> None:
    import orjson

    from callout_server.calllog.inputs import decision_json, storable_json

    for decision in ({"intent": "agree", "slots": {"time": "明天下午"}, "confidence": 0.9},
                     {"intent": None, "slots": {"t": f"a{NUL}b"}, "fallback": True},
                     {"intent": "x", "slots": {"t": "lone \ud800"}},
                     {"intent": "x", "slots": {f"k{NUL}": ["\\u0000 said", 1, None]}},
                     {"intent": "x", "slots": {"n": math.nan, "l": (1, 2)}}):
        text = decision_json(decision)
        assert text == orjson.dumps(storable_json(decision)).decode()
        assert "\\u0000" not in text.replace("\\\\", "")  # no NUL stored, escaped or not


def test_refused_data_is_told_from_an_unavailable_database() -> None:
    import asyncpg
    from sqlalchemy.exc import IntegrityError, OperationalError

    assert is_refused_data(asyncpg.exceptions.CharacterNotInRepertoireError("0x00"))
    assert is_refused_data(asyncpg.exceptions.StringDataRightTruncationError("too long"))
    assert is_refused_data(asyncpg.exceptions.UniqueViolationError("duplicate key"))
    assert is_refused_data(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates"))
    assert is_refused_data(IntegrityError("INSERT", {}, Exception("UNIQUE constraint")))
    for unavailable in (asyncpg.exceptions.ConnectionDoesNotExistError("closed"),
                        asyncpg.exceptions.AdminShutdownError("shutdown"),
                        asyncpg.exceptions.UndefinedTableError("no table"),
                        OperationalError("INSERT", {}, Exception("database is locked")),
                        ConnectionRefusedError(), TimeoutError()):
        assert not is_refused_data(unavailable), unavailable


async def test_unstorable_values_are_written_cleaned(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db)
    recorder.record(CallRecord(tier="nlu", code="upstream_error", call_id=f"x{NUL}",
                               node_id="n" * 500, message=f"vendor said {NUL}\ud800 bad",
                               latency_ms=math.nan, ttft_ms=math.inf))
    await recorder.flush()
    [row] = await stored(calllog_db)
    assert row.call_id == f"x{REPLACEMENT}" and row.node_id == "n" * 200
    assert row.message == f"vendor said {REPLACEMENT}{REPLACEMENT} bad"
    assert (row.latency_ms, row.ttft_ms) == (None, None)
    assert recorder.rejected == 0


async def test_a_refused_record_is_dropped_alone_and_counted(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, batch_size=50)
    first = CallRecord(tier="nlu", code="ok", call_id="first")
    recorder.record(first)
    await recorder.flush()
    before = rejected_total()
    for i in range(10):
        recorder.record(CallRecord(tier="nlu", code="ok", call_id=f"good-{i}"))
    # Poison put straight into the queue, as no caller can any more through record(): a
    # duplicate id (refused by both databases) and, on PostgreSQL, an uncleaned NUL byte.
    poison = [CallRecord(tier="nlu", code="ok", call_id="dup", id=first.id)]
    if calllog_db.engine.dialect.name == "postgresql":
        poison.append(CallRecord(tier="nlu", code="ok", call_id=f"nul{NUL}"))
    recorder._queue.extend(poison)
    for i in range(10, 20):
        recorder.record(CallRecord(tier="nlu", code="ok", call_id=f"good-{i}"))

    await recorder.flush()  # one batch of 21 or 22: split until the poison is alone
    assert recorder.rejected == len(poison) and rejected_total() - before == len(poison)
    assert recorder.written == 21 and recorder.pending == 0 and recorder.dropped == 0
    assert sorted(r.call_id for r in await stored(calllog_db)) == sorted(
        ["first", *(f"good-{i}" for i in range(20))])


async def test_the_writer_loop_goes_on_after_a_refused_record(calllog_db: Database) -> None:
    recorder = DiagnosticsRecorder(calllog_db, flush_interval_s=0.02)
    await recorder.start()
    try:
        recorder.record(CallRecord(tier="nlu", code="ok", call_id="first"))
        await wait_until(lambda: recorder.written == 1)
        recorder._queue.append(CallRecord(tier="nlu", code="ok", call_id="dup", id=1))
        recorder._queue.append(CallRecord(tier="nlu", code="ok", call_id="dup", id=1))
        for i in range(5):
            recorder.record(CallRecord(tier="nlu", code="ok", call_id=f"later-{i}"))
        await wait_until(lambda: recorder.pending == 0)
        assert recorder.rejected == 2 and recorder.written == 6 and recorder.db_ok
        assert recorder.health()["diagnostics_writer"] == "ok"
    finally:
        await recorder.stop()
    call_ids = sorted(r.call_id for r in await stored(calllog_db))
    assert call_ids == ["first", *(f"later-{i}" for i in range(5))]


async def test_nul_from_a_client_or_a_vendor_never_stalls_the_call_log(
        make_settings, pg_url, emulator) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    # First call: the vendor's error message holds a NUL; every later call is answered.
    await emulator.script(model, {"status": 400, "error_body": {"error": {
        "message": f"bad{NUL}param", "type": "invalid_request_error", "param": None,
        "code": None}}}, times=1)
    await emulator.script(model, {"content": answer("agree", time="明天")})
    async with nlu_app(make_settings, pg_url, emulator, model,
                       **{"diagnostics.flush_interval_s": 0.05}) as client:
        recorder = client.services.recorder  # type: ignore[attr-defined]
        r, _ = await decide(client, call_id="vendor-nul")
        assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_error", r.text
        # A client's NUL is refused at the edge (422 naming the field); nothing is logged.
        r, _ = await decide(client, call_id=f"x{NUL}")
        assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "call_id"
        r, _ = await decide(client, call_id="clean")
        assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
        for i in range(3):
            r, _ = await decide(client, call_id=f"after-{i}")
            assert r.status_code == 200, r.text
        # Written by the background loop, not by a flush from here.
        await wait_until(lambda: recorder.pending == 0 and recorder.written == 5)
        items = (await client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS,
                                  params={"limit": 50})).json()["items"]
        by_call = {x["call_id"]: x for x in items}
        assert set(by_call) == {"clean", "vendor-nul", "after-0", "after-1", "after-2"}
        vendor = by_call["vendor-nul"]
        assert vendor["code"] == "upstream_error" and f"bad{REPLACEMENT}param" in vendor["message"]
        health = (await client.get("/healthz")).json()
        assert health["diagnostics_rejected"] == 0 and health["diagnostics_writer"] == "ok"
        assert health["status"] == "ok"
        assert "callout_diagnostics_rejected_total" in (await client.get("/metrics")).text
