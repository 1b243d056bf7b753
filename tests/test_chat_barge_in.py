"""Barge-in: cancel, a newer turn, a higher revision. The stream ends within 100 ms with the
right reason, the upstream request is closed (the emulator sees the disconnect), the history
keeps only what was sent, marked interrupted, and a revised user message is not duplicated."""

from __future__ import annotations

import asyncio
import time

import pytest

from callout_server.tiers.chat.errors import StaleTurn
from tests.support.chat import (
    collect,
    make_service,
    new_session,
    sentences,
    the_end,
    turn,
    wait_disconnect,
)

# A long answer: one sentence every ~4 tokens at 60 ms per token.
LONG = {"chunks": ["第", "一句", "话", "。", "第", "二句", "话", "。", "第三", "句话", "。"] * 20,
        "token_delay_ms": 60}
BARGE_LIMIT_S = 0.1


async def _barge_after_first_sentence(h, run, action):
    """Collect `run`; after its first sentence run `action()`; return (events, delay)."""
    acted: list[float] = []

    def on_event(ev):
        if ev.name == "sentence" and not acted:
            acted.append(time.perf_counter())
            action()

    events = await collect(run, on_event)
    return events, events[-1].at - acted[0]


@pytest.mark.parametrize("style", ["chat-completions", "responses"])
async def test_cancel_ends_stream_and_closes_upstream(emulator, style):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    h = await make_service(emulator, model, api_style=style)
    try:
        new_session(h)
        run = turn(h, "t1", "介绍一下")
        events, delay = await _barge_after_first_sentence(
            h, run, lambda: h.service.cancel("c1", "t1"))
        assert delay < BARGE_LIMIT_S
        assert the_end(events) == {"event": "end", "turn_id": "t1", "reason": "cancelled",
                                   "error": None}
        assert sentences(events) == ["第一句话。"]
        record = await wait_disconnect(emulator, model)
        assert record["chunks_sent"] < 30  # it stopped generating long before the end
        session = h.service.get("c1")
        assert not session.in_response
        history = h.service.get_view("c1").history
        assert history[-1] == {"type": "assistant", "text": "第一句话。", "interrupted": True}
        await h.service.drain()
        assert h.recorder.records[-1].code == "cancelled"
    finally:
        await h.close()


async def test_the_emulators_stock_reply_can_be_barged_in_on(emulator):
    """As shipped (no script): the stock reply streams at a real model's pace, so a cancel
    after its first sentence stops it with the rest unsaid (the README's demo)."""
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        new_session(h)
        events, delay = await _barge_after_first_sentence(
            h, turn(h, "t1", "你好"), lambda: h.service.cancel("c1", "t1"))
        assert delay < BARGE_LIMIT_S and the_end(events)["reason"] == "cancelled"
        assert sentences(events) == ["好的，我明白您的意思了。"]
        record = await wait_disconnect(emulator, model)
        assert record["chunks_sent"] < 40  # of 45: the rest was never generated
    finally:
        await h.close()


async def test_cancel_for_another_turn_or_idle_session_is_a_no_op(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好的。"}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        assert h.service.cancel("c1") is False
        run = turn(h, "t1", "嗯")
        assert h.service.cancel("c1", "t0") is False
        assert the_end(await collect(run))["reason"] == "completed"
    finally:
        await h.close()


async def test_new_turn_supersedes_in_flight_turn(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    await emulator.script(model, {"content": "好的，马上为您转人工。"}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        second: list = []

        def barge():
            second.append(turn(h, "t2", "转人工"))

        events, delay = await _barge_after_first_sentence(h, turn(h, "t1", "介绍"), barge)
        assert delay < BARGE_LIMIT_S
        assert the_end(events)["reason"] == "superseded"
        await wait_disconnect(emulator, model)
        after = await collect(second[0])
        assert sentences(after) == ["好的，马上为您转人工。"]
        assert after[0].data["index"] == 0  # a new turn counts from 0
        history = h.service.get_view("c1").history
        assert [(i["type"], i.get("turn_id"), i.get("interrupted")) for i in history] == [
            ("user", "t1", None), ("assistant", None, True),
            ("user", "t2", None), ("assistant", None, False)]
        assert history[1]["text"] == "第一句话。"
        # The model saw the interrupted answer as said: exactly what the caller heard.
        body = (await emulator.requests(model))[1]["body"]
        assert [m["content"] for m in body["messages"]] == ["介绍", "第一句话。", "转人工"]
    finally:
        await h.close()


async def test_higher_revision_supersedes_and_replaces_user_message(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    await emulator.script(model, {"content": "好的，明天下午三点。"}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        revised: list = []

        def revise():
            revised.append(turn(h, "t1", "明天下午三点以后", revision=1))

        events, delay = await _barge_after_first_sentence(h, turn(h, "t1", "明天"), revise)
        assert delay < BARGE_LIMIT_S
        assert the_end(events)["reason"] == "superseded"
        await wait_disconnect(emulator, model)
        after = await collect(revised[0])
        assert the_end(after)["reason"] == "completed"
        users = [i for i in h.service.get_view("c1").history if i["type"] == "user"]
        assert users == [{"type": "user", "turn_id": "t1", "revision": 1,
                          "text": "明天下午三点以后"}]
        with pytest.raises(StaleTurn) as err:
            turn(h, "t1", "明天", revision=1)
        assert (err.value.status, err.value.code) == (409, "stale_revision")
        with pytest.raises(StaleTurn):
            turn(h, "t1", "明天", revision=0)
    finally:
        await h.close()


async def test_revision_of_an_older_turn_is_stale(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好。"}, times=2)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        await collect(turn(h, "t1", "一"))
        await collect(turn(h, "t2", "二"))
        with pytest.raises(StaleTurn) as err:
            turn(h, "t1", "一改", revision=1)
        assert err.value.code == "stale_turn"
    finally:
        await h.close()


async def test_barge_in_during_time_to_first_token(emulator):
    """Nothing spoken yet: the stream still ends at once and nothing enters the history."""
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好的。", "ttft_ms": 3000}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        run = turn(h, "t1", "喂")
        await asyncio.sleep(0.2)  # the request is out, no token yet
        t0 = time.perf_counter()
        h.service.cancel("c1")
        events = await collect(run)
        assert events[-1].at - t0 < BARGE_LIMIT_S
        assert the_end(events)["reason"] == "cancelled" and sentences(events) == []
        await wait_disconnect(emulator, model)
        assert [i["type"] for i in h.service.get_view("c1").history] == ["user"]
    finally:
        await h.close()


async def test_text_mode_interruption_keeps_sent_deltas(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        run = turn(h, "t1", "说", output="text")
        seen: list[str] = []

        def on_event(ev):
            if ev.name == "text_delta":
                seen.append(ev.data["text"])
                if len(seen) == 3:
                    h.service.cancel("c1")

        events = await collect(run, on_event)
        assert the_end(events)["reason"] == "cancelled"
        assert h.service.get_view("c1").history[-1] == {
            "type": "assistant", "text": "".join(seen), "interrupted": True}
    finally:
        await h.close()
