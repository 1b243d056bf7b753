"""Deadlines and faults: every turn stream ends with exactly one `end`, the apology is spoken
only before anything else was, and the session is never left "in response"."""

from __future__ import annotations

import time

import pytest

from callout_server.config.settings import ChatSettings
from callout_server.tiers.chat import turn as turn_module
from tests.fixtures.calllog import wait_until
from tests.support.chat import (
    collect,
    make_service,
    names,
    new_session,
    sentences,
    the_end,
    turn,
)

APOLOGY = ChatSettings().timeout_apology
FAST = {"ttft_timeout_s": 0.3, "read_timeout_s": 0.3}


# The stock reply at full speed (the emulator streams it at a real model's pace otherwise,
# 300 ms to the first token: as long as these tests' time limits).
STOCK_FAST = {"ttft_ms": 0, "token_delay_ms": 0}


async def _one_turn(emulator, reply, *, output="audio", session=None, then=None, **settings):
    model = emulator.unique_model("chatm")
    await emulator.script(model, reply, times=1)
    if then is not None:  # what the next request gets
        await emulator.script(model, then)
    h = await make_service(emulator, model, **{**FAST, **settings})
    try:
        new_session(h, **(session or {}))
        t0 = time.perf_counter()
        events = await collect(turn(h, "t1", "喂", output=output))
        assert not h.service.get("c1").in_response  # never left locked
        return events, events[-1].at - t0, h.service.get_view("c1"), h.recorder.records
    finally:
        await h.close()


async def test_ttft_timeout_speaks_apology_then_ends_timeout(emulator):
    events, took, view, records = await _one_turn(emulator, {"content": "好。", "ttft_ms": 5000})
    assert sentences(events) == [APOLOGY]
    end = the_end(events)
    assert end["reason"] == "timeout" and end["error"]["code"] == "timeout"
    assert 0.25 < took < 1.5  # the ttft limit, not the 60 s total
    assert view.history[-1] == {"type": "assistant", "text": APOLOGY, "interrupted": False}
    assert records[0].code == "timeout"


async def test_ttft_limit_is_separate_from_total(emulator):
    # Tokens within the ttft limit, then a steady stream longer than the ttft limit: fine.
    reply = {"chunks": ["好", "的", "。"] * 5, "ttft_ms": 100, "token_delay_ms": 60}
    events, took, _, _ = await _one_turn(emulator, reply)
    assert the_end(events)["reason"] == "completed" and took > 0.8


async def test_total_timeout_ends_a_slow_but_steady_stream(emulator):
    reply = {"chunks": ["嗯"] * 100, "token_delay_ms": 50}
    events, took, _, _ = await _one_turn(emulator, reply, session={"overrides": {"timeout_s": 0.6}})
    end = the_end(events)
    assert end["reason"] == "timeout" and took < 1.5
    assert sentences(events) == [APOLOGY]  # nothing had been spoken: "嗯嗯…" has no boundary


async def test_stall_with_keepalive_trickle_after_speech_has_no_apology(emulator):
    # Role chunk + 4 tokens ("您好。请问"), then keep-alive comments only.
    reply = {"chunks": ["您好", "。", "请", "问", "您"], "hang": 5, "keepalive_ms": 50}
    events, took, view, records = await _one_turn(emulator, reply)
    assert sentences(events) == ["您好。"]
    end = the_end(events)
    assert end["reason"] == "timeout" and records[0].reason == "stalled_keepalive"
    assert took < 1.5
    assert view.history[-1] == {"type": "assistant", "text": "您好。", "interrupted": True}


async def test_stall_before_any_sentence_speaks_apology(emulator):
    reply = {"chunks": ["您好", "我是", "小王"], "hang": 2, "keepalive_ms": 50}
    events, _, _, _ = await _one_turn(emulator, reply)
    assert sentences(events) == [APOLOGY] and the_end(events)["reason"] == "timeout"


async def test_apology_in_text_mode_and_custom_or_disabled(emulator):
    events, *_ = await _one_turn(emulator, {"content": "x", "ttft_ms": 5000}, output="text",
                                 session={"timeout_apology": "抱歉，请稍后再说一次。"})
    assert [e.data["text"] for e in events if e.name == "text_delta"] == ["抱歉，请稍后再说一次。"]
    events, *_ = await _one_turn(emulator, {"content": "x", "ttft_ms": 5000},
                                 session={"timeout_apology": ""})
    assert names(events) == ["end"] and the_end(events)["reason"] == "timeout"


@pytest.mark.parametrize("reply, code", [
    ({"status": 404, "error_body": {"error": {"message": "no such model"}}}, "upstream_error"),
    ({"status": 400, "error_body": {"error": {"message": "bad model"}}}, "upstream_error"),
    ({"chunks": ["您好", "。", "我", "是"], "malformed_after": 3}, "upstream_error"),
    ({"chunks": ["您好", "。", "我", "是"], "disconnect_after": 3}, "upstream_error"),
])
@pytest.mark.parametrize("style", ["chat-completions", "responses"])
async def test_upstream_faults_end_with_error(emulator, reply, code, style):
    events, _, view, records = await _one_turn(emulator, reply, api_style=style)
    end = the_end(events)
    assert end["reason"] == "error" and end["error"]["code"] == code
    assert end["error"]["message"]
    assert APOLOGY not in sentences(events)  # the apology is for timeouts only
    assert records[0].code == code
    if sentences(events):  # whatever was said before the fault stays, marked interrupted
        assert view.history[-1]["interrupted"] is True


async def test_passing_503_before_the_first_event_is_retried_and_completes(emulator):
    # The pool tries again before anything reached the caller: the turn is whole, one `end`.
    events, _, _, records = await _one_turn(emulator, {"status": 503}, then=STOCK_FAST)
    assert names(events).count("end") == 1 and the_end(events)["reason"] == "completed"
    assert sentences(events)
    assert (records[0].code, records[0].attempts) == ("ok", 2)


async def test_connect_error_ends_with_error(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    h.cfg["cfg"] = h.cfg["cfg"].__class__(tier="chat", name="x", base_url="http://127.0.0.1:9/v1",
                                          model=model)
    try:
        new_session(h)
        end = the_end(await collect(turn(h, "t1", "喂")))
        assert end["reason"] == "error" and end["error"]["code"] == "connect_error"
    finally:
        await h.close()


async def test_exception_in_our_code_still_ends_and_unlocks(emulator, monkeypatch):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "您好。"}, times=1)
    await emulator.script(model, {"content": "您好。"}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)

        def broken(text: str) -> str:
            raise RuntimeError("bug with 13800138000 in it")

        monkeypatch.setattr(turn_module, "speakable", broken)
        events = await collect(turn(h, "t1", "喂"))
        end = the_end(events)
        assert end["reason"] == "error" and end["error"]["code"] == "internal_error"
        assert not h.service.get("c1").in_response
        await wait_until(lambda: bool(h.recorder.records), 5.0)  # on the producer's way out
        record = h.recorder.records[0]  # recorded as what it was: it used to read `ok`
        assert (record.code, record.detail) == ("internal_error", "RuntimeError")  # type only
        monkeypatch.undo()
        assert the_end(await collect(turn(h, "t2", "喂")))["reason"] == "completed"
    finally:
        await h.close()


async def test_failing_config_lookup_still_ends(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)

    def no_config():
        raise LookupError("no active chat configuration")

    h.service._active_config = no_config  # type: ignore[method-assign]
    try:
        new_session(h)
        end = the_end(await collect(turn(h, "t1", "喂")))
        assert end["reason"] == "error" and end["error"]["code"] == "internal_error"
        assert not h.service.get("c1").in_response
    finally:
        await h.close()
