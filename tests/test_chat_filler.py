"""Fillers: a hold phrase when the model is slow to start, against the real emulator (its
`ttft_ms` paces the first token): spoken once, flagged, never stored; not spoken when the
answer is there first, in text output, or after a barge-in."""

from __future__ import annotations

import time
from typing import Any

from tests.support.chat import chunks_of, collect, names, new_session, sentences, the_end, turn
from tests.support.guard import FINANCE, Books, guarded_service, lexicon_book

FILLER = {"after_ms": 150, "texts": ["嗯，我查一下。", "请稍等。"]}


async def _service(emulator: Any, *replies: dict[str, Any]) -> Any:
    model = emulator.unique_model("chatm")
    for reply in replies:
        await emulator.script(model, reply, times=1)
    return await guarded_service(emulator, model, Books(lexicon_book(FINANCE)))


def _fillers(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.name == "sentence" and e.data.get("filler")]


async def test_a_slow_first_token_gets_one_filler(emulator):
    answer = "您的订单已发货。预计明天送达。"
    h = await _service(emulator, {"chunks": chunks_of(answer), "ttft_ms": 700},
                       {"chunks": chunks_of(answer), "ttft_ms": 700})
    try:
        new_session(h, filler=FILLER)
        started = time.perf_counter()
        events = await collect(turn(h, "t1", "我的快递呢"))
        fillers = _fillers(events)
        assert fillers == [{"event": "sentence", "turn_id": "t1", "index": 0,
                            "text": "嗯，我查一下。", "filler": True}]
        first = events[0]
        assert first.name == "sentence" and first.data.get("filler")
        assert 0.14 <= first.at - started < 0.5  # at after_ms, long before the first token
        answers = [e.data for e in events if e.name == "sentence" and not e.data.get("filler")]
        assert [a["index"] for a in answers] == [1, 2]  # the dialer's order stays contiguous
        assert "".join(a["text"] for a in answers) == answer
        assert the_end(events)["reason"] == "completed"
        history = h.service.get_view("c1").history
        assert [i.get("text") for i in history] == ["我的快递呢", answer]  # never the filler
        # The next turn's filler is the next text.
        events = await collect(turn(h, "t2", "还有吗"))
        assert [f["text"] for f in _fillers(events)] == ["请稍等。"]
    finally:
        await h.close()


async def test_a_fast_answer_gets_no_filler(emulator):
    h = await _service(emulator, {"chunks": ["好的", "。", "没", "问题", "。"] * 10,
                                  "token_delay_ms": 40})
    try:
        new_session(h, filler=FILLER)
        events = await collect(turn(h, "t1", "可以吗"))
        assert _fillers(events) == []
        assert events[0].name == "sentence" and events[0].data["index"] == 0
        assert names(events).count("end") == 1
    finally:
        await h.close()


async def test_first_token_without_a_sentence_still_gets_the_filler(emulator):
    # Tokens flow but no sentence boundary comes before after_ms: the caller hears nothing.
    h = await _service(emulator, {"chunks": [*"这个问题我需要仔细想一想再回答您", "。"],
                                  "token_delay_ms": 30})
    try:
        new_session(h, filler=FILLER)
        events = await collect(turn(h, "t1", "为什么"))
        assert len(_fillers(events)) == 1 and events[0].data.get("filler")
    finally:
        await h.close()


async def test_no_filler_in_text_output_or_without_one(emulator):
    h = await _service(emulator, {"content": "好的。", "ttft_ms": 400},
                       {"content": "好的。", "ttft_ms": 400})
    try:
        new_session(h, filler=FILLER)
        events = await collect(turn(h, "t1", "嗯", output="text"))
        assert "sentence" not in names(events)
        new_session(h, "c2")
        events = await collect(turn(h, "t1", "嗯", call_id="c2"))
        assert _fillers(events) == [] and sentences(events) == ["好的。"]
    finally:
        await h.close()


async def test_a_barge_in_before_the_filler_leaves_it_unsaid(emulator):
    h = await _service(emulator, {"content": "好的。", "ttft_ms": 800})
    try:
        new_session(h, filler={"after_ms": 300, "texts": ["请稍等。"]})
        run = turn(h, "t1", "嗯")
        timer = run._filler_timer
        assert timer is not None and not timer.cancelled()
        h.service.cancel("c1", "t1")
        events = await collect(run)
        assert names(events) == ["end"] and the_end(events)["reason"] == "cancelled"
        assert timer.cancelled()  # disarmed with the end: nothing can follow it
    finally:
        await h.close()


async def test_filler_and_guard_together(emulator):
    h = await _service(emulator, {"chunks": chunks_of("这款产品稳赚。您考虑一下。"),
                                  "ttft_ms": 500})
    try:
        new_session(h, filler=FILLER, guard={"lexicons": ["finance"]})
        events = await collect(turn(h, "t1", "怎么样"))
        assert [e.name for e in events][:2] == ["sentence", "guard"]
        assert sentences(events) == ["嗯，我查一下。", "具体收益以合同为准。", "您考虑一下。"]
    finally:
        await h.close()


async def test_once_per_turn_across_a_tool_continuation(emulator):
    from callout_server.tiers.chat.schemas import ToolOutputRequest

    tool = {"type": "function", "name": "lookup_order",
            "parameters": {"type": "object", "properties": {}}}
    call = {"id": "v1", "name": "lookup_order", "arguments": {}}
    h = await _service(emulator, {"tool_calls": [call], "ttft_ms": 400},
                       {"content": "已经发货了。", "ttft_ms": 400},
                       {"tool_calls": [{**call, "id": "v2"}]},
                       {"content": "明天到。", "ttft_ms": 400})
    try:
        new_session(h, filler=FILLER, tools=[tool])
        first = await collect(turn(h, "t1", "我的快递呢"))
        assert len(_fillers(first)) == 1  # slow to start: the hold phrase
        made = next(e.data["call_id"] for e in first if e.name == "tool_call")
        more = await collect(h.service.submit_tool_output(
            "c1", ToolOutputRequest(call_id=made, output="shipped", respond=True)))
        assert _fillers(more) == []  # slow again, but the turn already had its filler
        assert sentences(more) == ["已经发货了。"] and more[0].data["index"] == 1
        # A tool call at once, then a slow continuation: its filler is the turn's first.
        quick = await collect(turn(h, "t2", "什么时候到"))
        assert _fillers(quick) == []
        made = next(e.data["call_id"] for e in quick if e.name == "tool_call")
        later = await collect(h.service.submit_tool_output(
            "c1", ToolOutputRequest(call_id=made, output="tomorrow", respond=True)))
        assert [f["text"] for f in _fillers(later)] == ["请稍等。"]
    finally:
        await h.close()
