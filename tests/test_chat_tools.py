"""Tool calls: flushed-before text, fresh call ids, history, output pairing and continuation
(both API styles), unknown ids, and outputs for calls that were evicted."""

from __future__ import annotations

import pytest

from callout_server.tiers.chat.errors import UnknownToolCall
from callout_server.tiers.chat.schemas import ToolOutputRequest
from tests.support.chat import (
    collect,
    make_service,
    names,
    new_session,
    sentences,
    the_end,
    turn,
)

STYLES = ["chat-completions", "responses"]
TOOL = {"type": "function", "name": "lookup_order", "description": "查询订单",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
CALL = {"id": "call_vendor_1", "name": "lookup_order", "arguments": {"order_id": "A1"}}


def output(call_id: str, value: object, respond: bool) -> ToolOutputRequest:
    return ToolOutputRequest(call_id=call_id, output=value, respond=respond)


def tool_pairs(body: dict) -> list[tuple[str, str]]:
    """(call id, output) pairs the vendor was sent, in either API style."""
    if "messages" in body:
        calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
        outs = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    else:
        items = [i for i in body["input"] if isinstance(i, dict)]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        outs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    assert set(calls) == set(outs), (calls, outs)  # never an orphan either way
    return [(c, outs[c]) for c in calls]


@pytest.mark.parametrize("style", STYLES)
async def test_tool_call_flushed_recorded_and_answered(emulator, style):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": ["好的，", "我帮您", "查一下", "。", "稍等"],
                                  "tool_calls": [CALL]}, times=1)
    await emulator.script(model, {"content": "您的订单已经发货了。"}, times=1)
    h = await make_service(emulator, model, api_style=style, batch_sentences=3)
    try:
        new_session(h, tools=[TOOL])
        events = await collect(turn(h, "t1", "我的订单到哪了"))
        order = names(events)
        call_at = order.index("tool_call")
        # Everything said before the call went out first, held text included ("稍等").
        assert sentences(events) == ["好的，我帮您查一下。", "稍等"]
        assert all(n == "sentence" for n in order[:call_at])
        call = events[call_at].data
        assert call["name"] == "lookup_order" and call["arguments"] == {"order_id": "A1"}
        assert call["turn_id"] == "t1"
        assert call["call_id"].startswith("call_") and call["call_id"] != CALL["id"]
        assert the_end(events)["reason"] == "completed"

        view = h.service.get_view("c1")
        kinds = [(i["type"], i.get("status")) for i in view.history]
        assert kinds == [("user", None), ("assistant", None), ("function_call", "pending")]
        assert view.history[1]["text"] == "好的，我帮您查一下。稍等"
        assert view.pending_call_ids == [call["call_id"]]

        run = h.service.submit_tool_output("c1", output(call["call_id"], {"status": "已发货"},
                                                           respond=True))
        assert run is not None
        more = await collect(run)
        assert sentences(more) == ["您的订单已经发货了。"]
        # Continuation of the same turn: indices go on after the two sentences above.
        assert [e.data["index"] for e in more if e.name == "sentence"] == [2]
        assert the_end(more) == {"event": "end", "turn_id": "t1", "reason": "completed",
                                 "error": None}
        body = (await emulator.requests(model))[1]["body"]
        assert tool_pairs(body) == [(call["call_id"], '{"status": "已发货"}')]
        view = h.service.get_view("c1")
        assert [i["type"] for i in view.history] == [
            "user", "assistant", "function_call", "function_call_output", "assistant"]
        assert view.history[2]["status"] == "completed" and view.pending_call_ids == []
    finally:
        await h.close()


async def test_output_without_respond_and_unknown_id(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"tool_calls": [CALL, {**CALL, "id": "c2"}]}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h, tools=[TOOL])
        events = await collect(turn(h, "t1", "查两个"))
        ids = [e.data["call_id"] for e in events if e.name == "tool_call"]
        assert len(set(ids)) == 2 and sentences(events) == []
        assert h.service.submit_tool_output("c1", output(ids[0], "ok", respond=False)) is None
        with pytest.raises(UnknownToolCall) as err:  # answered already
            h.service.submit_tool_output("c1", output(ids[0], "again", respond=False))
        assert (err.value.status, err.value.code) == (409, "unknown_call_id")
        with pytest.raises(UnknownToolCall):
            h.service.submit_tool_output("c1", output("call_nope", "x", respond=True))
        assert h.service.get_view("c1").pending_call_ids == [ids[1]]
        assert len(await emulator.requests(model)) == 1  # no model call without respond
    finally:
        await h.close()


@pytest.mark.parametrize("style", STYLES)
async def test_output_for_evicted_call_is_reinjected(emulator, style):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "我查一下。", "tool_calls": [CALL]}, times=1)
    await emulator.script(model, {"content": "好的。"}, times=2)
    await emulator.script(model, {"content": "查到了，已发货。"}, times=1)
    h = await make_service(emulator, model, api_style=style)
    try:
        new_session(h, tools=[TOOL], history_turns=1)
        first = await collect(turn(h, "t1", "订单呢"))
        call_id = next(e.data["call_id"] for e in first if e.name == "tool_call")
        await collect(turn(h, "t2", "还有别的吗"))
        await collect(turn(h, "t3", "好"))  # trim after t3: t1 (and the call) evicted
        items = h.service.get_view("c1").history
        assert [i["type"] for i in items] == ["user", "assistant"]
        assert h.service.get_view("c1").pending_call_ids == [call_id]

        more = await collect(h.service.submit_tool_output("c1", output(call_id, "已发货", True)))
        assert sentences(more) == ["查到了，已发货。"]
        body = (await emulator.requests(model))[-1]["body"]
        assert tool_pairs(body) == [(call_id, "已发货")]
    finally:
        await h.close()


async def test_tool_output_supersedes_generation_in_flight(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"tool_calls": [CALL]}, times=1)
    await emulator.script(model, {"chunks": ["嗯", "。"] * 50, "token_delay_ms": 50}, times=1)
    await emulator.script(model, {"content": "已发货。"}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h, tools=[TOOL])
        events = await collect(turn(h, "t1", "订单"))
        call_id = next(e.data["call_id"] for e in events if e.name == "tool_call")
        slow = turn(h, "t2", "在吗")
        continued: list = []

        async def answer(ev):
            if ev.name == "sentence" and not continued:
                cont = h.service.submit_tool_output("c1", output(call_id, "ok", True))
                continued.append(await collect(cont))

        slow_events = await collect(slow, answer)
        assert the_end(slow_events)["reason"] == "superseded"
        cont_events = continued[0]
        assert sentences(cont_events) == ["已发货。"] and cont_events[-1].data["turn_id"] == "t1"
    finally:
        await h.close()
