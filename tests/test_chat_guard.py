"""The per-sentence speech guard on chat sessions, against the real emulator: each action on
both output modes, allowed look-alikes, mask_pii, what the history keeps, the `guard` event
(never the term), `end_turn` closing the model's stream, barge-in still at once, and a
guard that names an unknown lexicon refused."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from callout_server.tiers.chat.errors import SessionNotFound
from tests.support.chat import (
    chunks_of,
    collect,
    http_client,
    names,
    new_session,
    sentences,
    the_end,
    turn,
    wait_disconnect,
)
from tests.support.guard import FINANCE, PLATFORM, STOP, Books, guarded_service, lexicon_book

GUARD = {"lexicons": ["finance", "platform", "stop"]}


def _guards(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.name == "guard"]


async def _run(emulator: Any, reply: str, *, guard: dict[str, Any] = GUARD,
               output: str = "audio", books: Books | None = None,
               **script: Any) -> tuple[Any, list[Any], str]:
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": chunks_of(reply, 2), **script}, times=1)
    h = await guarded_service(emulator, model, books or Books(lexicon_book(FINANCE, PLATFORM, STOP)))
    new_session(h, guard=guard)
    events = await collect(turn(h, "t1", "介绍一下", output=output))
    return h, events, model


async def test_replace_speaks_the_replacement_and_the_history_keeps_it(emulator):
    h, events, _ = await _run(emulator, "您好，我是小王。这款产品穩 賺不赔。您考虑一下？")
    try:
        said = sentences(events)
        assert all("賺" not in s and "赚" not in s for s in said), said
        assert "".join(said) == "您好，我是小王。具体收益以合同为准。您考虑一下？"
        guard = _guards(events)
        assert guard == [{"event": "guard", "turn_id": "t1", "index": 1, "action": "replace",
                          "lexicon": "finance"}]  # what was done and where; never the term
        assert names(events).index("guard") < names(events).index("sentence", 1)
        assert the_end(events)["reason"] == "completed"
        history = h.service.get_view("c1").history
        assert history[-1] == {"type": "assistant", "text": "您好，我是小王。具体收益以合同为准。您考虑一下？",
                               "interrupted": False}
    finally:
        await h.close()


async def test_drop_says_nothing_for_that_sentence(emulator):
    h, events, _ = await _run(emulator, "好的。您可以加 微信聊。我们明天联系您。")
    try:
        assert "".join(sentences(events)) == "好的。我们明天联系您。"
        assert [(g["action"], g["lexicon"]) for g in _guards(events)] == [("drop", "platform")]
        assert h.service.get_view("c1").history[-1]["text"] == "好的。我们明天联系您。"
    finally:
        await h.close()


async def test_allowed_look_alikes_are_spoken_as_written(emulator):
    reply = "款项确保本月到账。担保本金的事我稍后说明。"
    h, events, _ = await _run(emulator, reply)
    try:
        assert "".join(sentences(events)) == reply and _guards(events) == []
        assert h.service.get_view("c1").history[-1]["text"] == reply  # the model's own text
    finally:
        await h.close()


async def test_end_turn_ends_guarded_and_closes_the_models_stream(emulator):
    reply = "您好。这个价格很优惠。给您内部价，" + "后面还有很多话。" * 40
    h, events, model = await _run(emulator, reply, token_delay_ms=20)
    try:
        assert the_end(events) == {"event": "end", "turn_id": "t1", "reason": "guarded",
                                   "error": None}
        assert names(events).count("end") == 1
        # The sentence held in the batch before the hit is spoken; nothing after it.
        assert "".join(sentences(events)) == "您好。这个价格很优惠。"
        assert [(g["action"], g["lexicon"]) for g in _guards(events)] == [("end_turn", "stop")]
        record = await wait_disconnect(emulator, model)
        assert record["chunks_sent"] < 40  # of ~170: the model's stream was closed at once
        history = h.service.get_view("c1").history
        assert history[-1] == {"type": "assistant", "text": "您好。这个价格很优惠。",
                               "interrupted": True}
        assert not h.service.get("c1").in_response
        deadline = time.monotonic() + 3  # the producer records the call once it is gone
        while not h.recorder.records and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        assert h.recorder.records[-1].code == "cancelled"  # the call log: we cut the call
    finally:
        await h.close()


async def test_text_output_is_released_a_sentence_at_a_time(emulator):
    reply = "Sure. Add me on WeChat today. 这款产品稳赚。Bye now."
    h, events, _ = await _run(emulator, reply, output="text")
    try:
        deltas = [e.data["text"] for e in events if e.name == "text_delta"]
        assert deltas == ["Sure.", "具体收益以合同为准。", "Bye now."]
        assert [g["action"] for g in _guards(events)] == ["drop", "replace"]
        assert h.service.get_view("c1").history[-1]["text"] == "Sure.具体收益以合同为准。Bye now."
    finally:
        await h.close()


async def test_text_output_end_turn(emulator):
    h, events, _ = await _run(emulator, "Hello there. 内部价给您。More text.", output="text")
    try:
        assert [e.data["text"] for e in events if e.name == "text_delta"] == ["Hello there."]
        assert the_end(events)["reason"] == "guarded"
        assert h.service.get_view("c1").history[-1] == {
            "type": "assistant", "text": "Hello there.", "interrupted": True}
    finally:
        await h.close()


async def test_mask_pii_speaks_the_last_four_digits(emulator):
    reply = "您登记的手机号是13800138000。身份证号110101199003077572，请核对。"
    h, events, _ = await _run(emulator, reply, guard={"mask_pii": True})
    try:
        spoken = "".join(sentences(events))
        assert spoken == "您登记的手机号是尾号8000。身份证号尾号7572，请核对。"
        assert "13800138000" not in str([e.data for e in events])
        assert [(g["action"], g["lexicon"]) for g in _guards(events)] == [
            ("mask_pii", None), ("mask_pii", None)]
        assert h.service.get_view("c1").history[-1]["text"] == spoken
    finally:
        await h.close()


async def test_without_a_guard_nothing_is_checked(emulator):
    h, events, _ = await _run(emulator, "这款产品稳赚。", guard=None)  # type: ignore[arg-type]
    try:
        assert sentences(events) == ["这款产品稳赚。"] and _guards(events) == []
    finally:
        await h.close()


async def test_an_operators_change_applies_from_the_next_turn(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "这款产品零风险。"}, times=2)
    books = Books(lexicon_book(FINANCE))
    h = await guarded_service(emulator, model, books)
    try:
        new_session(h, guard={"lexicons": ["finance"]})
        assert sentences(await collect(turn(h, "t1", "a"))) == ["具体收益以合同为准。"]
        books.current = lexicon_book(("finance", "drop", ["保本"], [], None))
        assert sentences(await collect(turn(h, "t2", "b"))) == ["这款产品零风险。"]
    finally:
        await h.close()


async def test_barge_in_still_closes_the_models_stream_at_once(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": ["第", "一句", "话", "。", "稳赚", "。", "第二", "句。"] * 30,
                                  "token_delay_ms": 60}, times=1)
    h = await guarded_service(emulator, model, Books(lexicon_book(FINANCE)))
    try:
        new_session(h, guard={"lexicons": ["finance"], "mask_pii": True})
        acted: list[float] = []

        def on_event(ev: Any) -> None:
            if ev.name == "sentence" and not acted:
                acted.append(time.perf_counter())
                h.service.cancel("c1", "t1")

        events = await collect(turn(h, "t1", "介绍"), on_event)
        assert events[-1].at - acted[0] < 0.1
        assert the_end(events)["reason"] == "cancelled"
        record = await wait_disconnect(emulator, model)
        assert record["chunks_sent"] < 30
    finally:
        await h.close()


async def test_a_guard_naming_an_unknown_lexicon_is_refused(emulator):
    model = emulator.unique_model("chatm")
    h = await guarded_service(emulator, model, Books(lexicon_book(FINANCE)))
    try:
        async with http_client(h.service) as client:
            r = await client.post("/api/chat/sessions", headers={"Accept-Language": "en"},
                                  json={"call_id": "c9", "guard": {"lexicons": ["finance", "nope"]}})
            assert r.status_code == 422, r.text
            err = r.json()["error"]
            assert err["fields"][0]["field"] == "guard.lexicons" and "nope" in err["message"]
            r = await client.post("/api/chat/sessions", json={
                "call_id": "c9", "guard": {"lexicons": ["finance"], "mask_pii": True},
                "filler": {"after_ms": 900, "texts": ["嗯，我查一下。"]}})
            assert r.status_code == 201, r.text
            assert r.json()["guard"] == {"lexicons": ["finance"], "mask_pii": True}
            assert r.json()["filler"] == {"after_ms": 900, "texts": ["嗯，我查一下。"]}
            for bad, field in (({"guard": {"lexicons": ["bad name"]}}, "guard"),
                               ({"filler": {"after_ms": 10, "texts": ["x"]}}, "filler"),
                               ({"filler": {"texts": []}}, "filler")):
                r = await client.post("/api/chat/sessions", json={"call_id": "c8", **bad})
                assert r.status_code == 422 and field in r.json()["error"]["fields"][0]["field"]
        try:
            h.service.get("c8")
            raise AssertionError("a refused session was created")
        except SessionNotFound:
            pass
    finally:
        await h.close()


async def test_guard_actions_and_fillers_are_counted(emulator):
    from prometheus_client import REGISTRY

    def value(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    before = (value("callout_chat_guard_actions_total", lexicon="finance", action="replace"),
              value("callout_chat_guard_actions_total", lexicon="", action="mask_pii"),
              value("callout_chat_fillers_total"))
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": chunks_of("稳赚。保本。电话13800138000。"),
                                  "ttft_ms": 400}, times=1)
    h = await guarded_service(emulator, model, Books(lexicon_book(FINANCE)))
    try:
        new_session(h, guard={"lexicons": ["finance"], "mask_pii": True},
                    filler={"after_ms": 100, "texts": ["请稍等。"]})
        await collect(turn(h, "t1", "a"))
        after = (value("callout_chat_guard_actions_total", lexicon="finance", action="replace"),
                 value("callout_chat_guard_actions_total", lexicon="", action="mask_pii"),
                 value("callout_chat_fillers_total"))
        assert [a - b for a, b in zip(after, before, strict=True)] == [2, 1, 1]
    finally:
        await h.close()


async def test_mask_pii_in_text_output(emulator):
    h, events, _ = await _run(emulator, "Call me at 13800138000. Thanks.", output="text",
                              guard={"mask_pii": True})
    try:
        deltas = [e.data["text"] for e in events if e.name == "text_delta"]
        assert deltas == ["Call me at ending in 8000.", " Thanks."]
        assert h.service.get_view("c1").history[-1]["text"] == "Call me at ending in 8000. Thanks."
    finally:
        await h.close()
