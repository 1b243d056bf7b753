"""Session lifecycle (create, duplicate, idle TTL, delete, shutdown) and background
compaction through the service, including its races."""

from __future__ import annotations

import asyncio
import time

import pytest

from callout_server.tiers.chat.errors import SessionExists, SessionNotFound, TooManySessions
from callout_server.tiers.chat.history import SUMMARY_HEADER
from callout_server.tiers.chat.schemas import ToolOutputRequest
from tests.support.chat import (
    collect,
    make_service,
    new_session,
    sentences,
    the_end,
    turn,
    wait_disconnect,
)

SLOW = {"chunks": ["好", "的", "。"] * 40, "token_delay_ms": 50}
CALL = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
TOOL = {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}}


async def test_duplicate_session_is_409(emulator):
    h = await make_service(emulator, emulator.unique_model("chatm"))
    try:
        new_session(h)
        with pytest.raises(SessionExists) as err:
            new_session(h)
        assert (err.value.status, err.value.code) == (409, "session_exists")
        with pytest.raises(SessionNotFound):
            turn(h, "t1", "喂", call_id="nope")
    finally:
        await h.close()


async def test_session_cap_refuses_new_calls_clearly_until_one_ends(emulator):
    h = await make_service(emulator, emulator.unique_model("chatm"), max_sessions=2)
    try:
        new_session(h, "c1")
        new_session(h, "c2")
        with pytest.raises(TooManySessions) as err:
            new_session(h, "c3")
        assert (err.value.status, err.value.code) == (503, "too_many_sessions")
        h.service.delete_session("c1")
        new_session(h, "c3")
    finally:
        await h.close()


async def test_idle_sessions_expire_but_not_while_in_response(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": ["好", "的", "。"] * 6, "token_delay_ms": 50},
                          times=1)
    h = await make_service(emulator, model, session_ttl_s=0.3)
    try:
        new_session(h, call_id="idle")
        new_session(h, call_id="busy")
        run = turn(h, "t1", "喂", call_id="busy")
        await asyncio.sleep(0.6)  # sweeper runs every ttl/4
        assert "idle" not in h.service.sessions
        assert "busy" in h.service.sessions  # in response: not idle
        assert the_end(await collect(run))["reason"] == "completed"
        await asyncio.sleep(0.6)
        assert h.service.sessions == {}
    finally:
        await h.close()


async def test_memory_stays_bounded_over_many_calls(emulator):
    h = await make_service(emulator, emulator.unique_model("chatm"), session_ttl_s=60)
    try:
        for i in range(2000):
            new_session(h, call_id=f"c{i}", system_prompt="你是客服")
        assert h.service.expire_idle(now=time.monotonic() + 61) == 2000
        assert h.service.sessions == {}
    finally:
        await h.close()


async def test_delete_cancels_work_in_flight(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, SLOW, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        run = turn(h, "t1", "喂")

        def on_event(ev):
            if ev.name == "sentence":
                h.service.delete_session("c1")

        events = await collect(run, on_event)
        assert the_end(events)["reason"] == "cancelled"
        await wait_disconnect(emulator, model)
        with pytest.raises(SessionNotFound):
            h.service.get_view("c1")
        with pytest.raises(SessionNotFound):
            h.service.delete_session("c1")
        new_session(h)  # the call_id is free again
    finally:
        await h.close()


async def test_service_stop_ends_every_stream(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, SLOW, times=2)
    h = await make_service(emulator, model)
    new_session(h, call_id="a")
    new_session(h, call_id="b")
    runs = [turn(h, "t1", "喂", call_id="a"), turn(h, "t1", "喂", call_id="b")]
    collecting = [asyncio.create_task(collect(r)) for r in runs]
    await asyncio.sleep(0.3)
    await h.close()
    for task in collecting:
        assert the_end(await task)["reason"] == "cancelled"
    assert all(r.task is not None and r.task.done() for r in runs)


async def test_compaction_summarises_older_turns(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        new_session(h, system_prompt="你是客服", history_turns=2, compact_history=True)
        await emulator.script(model, {"content": "您好，我是小王。"}, times=1)
        await emulator.script(model, {"content": "好的，记下了。"}, times=2)
        await emulator.script(model, {"content": "客户张三，订单A1，要求明天下午三点送达。"},
                              times=1)
        await emulator.script(model, {"content": "好的。"}, times=1)
        await collect(turn(h, "t1", "我叫张三，订单A1"))
        await collect(turn(h, "t2", "明天下午三点送"))
        await collect(turn(h, "t3", "好的"))  # 3 turns > 2: t1+t2 compacted, t3 kept
        await h.service.get("c1").history.wait_compaction()
        view = h.service.get_view("c1")
        assert view.summary == "客户张三，订单A1，要求明天下午三点送达。"
        assert [i["type"] for i in view.history] == ["summary", "user", "assistant"]
        summary_req = (await emulator.requests(model))[3]["body"]
        assert summary_req["stream"] is False and "tools" not in summary_req
        assert "客户: 我叫张三，订单A1" in summary_req["messages"][1]["content"]
        assert [r.node_id for r in h.recorder.records] == [None, None, None, "compaction"]
        await collect(turn(h, "t4", "还有吗"))
        system = (await emulator.requests(model))[4]["body"]["messages"][0]["content"]
        assert system.startswith("你是客服") and SUMMARY_HEADER in system and "张三" in system
    finally:
        await h.close()


async def _compaction_ready(emulator, model, h, summary_reply):
    new_session(h, history_turns=2, compact_history=True, tools=[TOOL])
    await emulator.script(model, {"content": "我查一下。", "tool_calls": [CALL]}, times=1)
    await emulator.script(model, {"content": "好的。"}, times=2)
    await emulator.script(model, summary_reply, times=1)
    first = await collect(turn(h, "t1", "订单A1到哪了"))
    await collect(turn(h, "t2", "明天送"))
    await collect(turn(h, "t3", "好"))  # -> compaction of t1+t2 starts in the background
    return next(e.data["call_id"] for e in first if e.name == "tool_call")


async def test_delete_during_compaction_discards_it(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        await _compaction_ready(emulator, model, h, {"content": "摘要", "ttft_ms": 2000})
        history = h.service.get("c1").history
        assert history.compaction_in_flight
        await asyncio.sleep(0.1)
        h.service.delete_session("c1")  # reset/close: the generation counter voids the result
        await history.wait_compaction()
        assert history.summary is None
        await wait_disconnect(emulator, model, index=3)  # the summary call was hung up
        assert h.recorder.records[-1].node_id == "compaction"
        assert h.recorder.records[-1].code == "cancelled"
    finally:
        await h.close()


async def test_failed_compaction_leaves_history_unchanged(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        await _compaction_ready(emulator, model, h, {"status": 400})
        history = h.service.get("c1").history
        before = h.service.get_view("c1").history
        await history.wait_compaction()
        assert history.summary is None and h.service.get_view("c1").history == before
        assert h.recorder.records[-1].code == "upstream_error"
    finally:
        await h.close()


async def test_tool_output_for_call_compacted_away(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        call_id = await _compaction_ready(emulator, model, h, {"content": "客户问订单A1。"})
        history = h.service.get("c1").history
        await history.wait_compaction()
        assert history.summary == "客户问订单A1。"
        assert call_id not in [i.get("call_id") for i in h.service.get_view("c1").history]
        await emulator.script(model, {"content": "已发货。"}, times=1)
        run = h.service.submit_tool_output(
            "c1", ToolOutputRequest(call_id=call_id, output="已发货", respond=True))
        assert sentences(await collect(run)) == ["已发货。"]
        msgs = (await emulator.requests(model))[-1]["body"]["messages"]
        calls = [c["id"] for m in msgs for c in m.get("tool_calls") or ()]
        outs = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
        assert calls == outs == [call_id]
    finally:
        await h.close()


async def test_tool_output_arriving_during_compaction(emulator):
    model = emulator.unique_model("chatm")
    h = await make_service(emulator, model)
    try:
        call_id = await _compaction_ready(emulator, model, h, {"content": "摘要", "ttft_ms": 300})
        history = h.service.get("c1").history
        assert history.compaction_in_flight
        h.service.submit_tool_output("c1", ToolOutputRequest(call_id=call_id, output="已发货"))
        await history.wait_compaction()
        msgs = history.to_messages()
        calls = [c["id"] for m in msgs for c in m.get("tool_calls") or ()]
        outs = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
        assert calls == outs == [call_id]  # paired, whether the splice went through or not
    finally:
        await h.close()
