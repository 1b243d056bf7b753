"""How a chat turn ends at its edges, against the real emulator: an `end_turn` hit in the
text flushed at the end of the stream or just before a tool call ends the turn `guarded`
(no call made); a vendor that stalls after its finish reason still completes the turn
(`FINISH_GRACE_S`), with no apology after a tool call; a bug of ours is recorded as
`internal_error`, not `ok`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from callout_server.calllog.records import CallRecord
from callout_server.config.settings import ChatSettings
from callout_server.llm.stream import FINISH_GRACE_S
from callout_server.tiers.chat.schemas import ToolOutputRequest
from tests.support.chat import (
    Event,
    Harness,
    collect,
    make_service,
    names,
    new_session,
    sentences,
    the_end,
    turn,
    wait_disconnect,
)
from tests.support.guard import Books, guarded_service, lexicon_book

pytestmark = pytest.mark.timeout(30)

APOLOGY = ChatSettings().timeout_apology
PROMISE = ("promise", "end_turn", ["保证收益"], [], None)
GUARD = {"lexicons": ["promise"]}
TOOL = {"type": "function", "name": "lookup", "description": "查询",
        "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}}}
# Raw arguments of 7 characters: one argument delta, so the frames are known (see `hang`).
CALL = {"name": "lookup", "arguments": '{"q":1}'}


def _said(events: list[Event], output: str) -> list[str]:
    kind = "sentence" if output == "audio" else "text_delta"
    return [e.data["text"] for e in events if e.name == kind]


def _guards(events: list[Event]) -> list[str]:
    return [e.data["action"] for e in events if e.name == "guard"]


def _after_guard(events: list[Event]) -> set[str]:
    """What came after the `guard` event: only the turn's closing (`usage`, `end`) may."""
    order = names(events)
    return set(order[order.index("guard") + 1:])


async def _records(h: Harness, count: int = 1, timeout_s: float = 3.0) -> list[CallRecord]:
    """The call log once it holds `count` records (the producer writes on its way out)."""
    deadline = time.monotonic() + timeout_s
    while len(h.recorder.records) < count:
        assert time.monotonic() < deadline, h.recorder.records
        await asyncio.sleep(0.01)
    return h.recorder.records


async def _guarded_turn(emulator: Any, reply: dict[str, Any], output: str,
                        **session: Any) -> tuple[Harness, list[Event], str]:
    model = emulator.unique_model("chatm")
    await emulator.script(model, reply, times=1)
    h = await guarded_service(emulator, model, Books(lexicon_book(PROMISE)))
    new_session(h, guard=GUARD, **session)
    return h, await collect(turn(h, "t1", "收益怎么样", output=output)), model


# -- 1. end_turn in text the batcher gives out late -----------------------------------------


@pytest.mark.parametrize("output", ["audio", "text"])
async def test_end_turn_in_the_tail_flushed_at_the_end_ends_guarded(emulator: Any,
                                                                    output: str) -> None:
    # No final punctuation: the hit is only seen when the stream's end flushes the batcher.
    h, events, _ = await _guarded_turn(emulator, {"chunks": ["您好。", "我们保证收益"]}, output)
    try:
        assert _said(events, output) == ["您好。"]
        assert _guards(events) == ["end_turn"]
        assert the_end(events) == {"event": "end", "turn_id": "t1", "reason": "guarded",
                                   "error": None}
        assert _after_guard(events) <= {"usage", "end"}  # nothing said after the hit
        history = h.service.get_view("c1").history
        assert history[-1] == {"type": "assistant", "text": "您好。", "interrupted": True}
        assert not h.service.get("c1").in_response
    finally:
        await h.close()


@pytest.mark.parametrize("output", ["audio", "text"])
async def test_end_turn_just_before_a_tool_call_makes_no_call(emulator: Any, output: str) -> None:
    reply = {"chunks": ["好的，", "我们保证收益"], "tool_calls": [CALL]}
    h, events, model = await _guarded_turn(emulator, reply, output, tools=[TOOL])
    try:
        assert "tool_call" not in names(events)
        assert _guards(events) == ["end_turn"]
        assert the_end(events)["reason"] == "guarded"
        assert _after_guard(events) <= {"usage", "end"}
        view = h.service.get_view("c1")
        assert view.pending_call_ids == []
        assert [i["type"] for i in view.history if i["type"] != "user"] in ([], ["assistant"])
        assert all("保证收益" not in (i.get("text") or "") for i in view.history[1:])
        assert all(i.get("interrupted") is True for i in view.history[1:])
        # The session is free and clean: the next turn runs (no orphan call in its request).
        await emulator.script(model, {"content": "您好。"}, times=1)
        assert the_end(await collect(turn(h, "t2", "喂", output=output)))["reason"] == "completed"
        body = (await emulator.requests(model))[1]["body"]
        assert not any(m.get("tool_calls") or m["role"] == "tool" for m in body["messages"])
    finally:
        await h.close()


# -- 2. a vendor that stalls after its finish reason ----------------------------------------


@pytest.mark.parametrize("read_timeout_s", [0.3, 10.0])
async def test_text_then_finish_then_stall_completes(emulator: Any, read_timeout_s: float) -> None:
    model = emulator.unique_model("chatm")
    # Frames: role, the text, the finish chunk; then silence, connection open (no [DONE]).
    await emulator.script(model, {"chunks": ["好的，已为您登记。"], "hang": 3}, times=1)
    h = await make_service(emulator, model, ttft_timeout_s=5.0, read_timeout_s=read_timeout_s)
    try:
        new_session(h)
        t0 = time.perf_counter()
        events = await collect(turn(h, "t1", "登记一下"))
        took = events[-1].at - t0
        assert sentences(events) == ["好的，已为您登记。"]
        assert the_end(events)["reason"] == "completed"
        assert took < min(FINISH_GRACE_S, read_timeout_s) + 1.0  # the grace, not a timeout
        history = h.service.get_view("c1").history
        assert history[-1] == {"type": "assistant", "text": "好的，已为您登记。",
                               "interrupted": False}
        record = await wait_disconnect(emulator, model)  # we hung up on the open stream
        assert record["chunks_sent"] == 3  # the finish chunk went out, [DONE] never did
        assert (await _records(h))[0].code == "ok"
    finally:
        await h.close()


async def test_tool_call_then_stall_completes_with_no_apology(emulator: Any) -> None:
    model = emulator.unique_model("chatm")
    # Frames: role, the call's name, its one argument delta, the finish chunk; then silence.
    await emulator.script(model, {"tool_calls": [CALL], "hang": 4}, times=1)
    h = await make_service(emulator, model, ttft_timeout_s=5.0, read_timeout_s=0.3)
    try:
        new_session(h, tools=[TOOL])
        events = await collect(turn(h, "t1", "查一下"))
        assert APOLOGY not in sentences(events)
        assert names(events)[-2:] == ["tool_call", "end"]
        assert the_end(events)["reason"] == "completed"
        view = h.service.get_view("c1")
        assert [(i["type"], i.get("status")) for i in view.history] == [
            ("user", None), ("function_call", "pending")]
        assert (await wait_disconnect(emulator, model))["chunks_sent"] == 4
    finally:
        await h.close()


async def test_no_apology_after_a_tool_call_when_the_continuation_times_out(emulator: Any) -> None:
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"tool_calls": [CALL]}, times=1)
    await emulator.script(model, {"content": "查到了。", "ttft_ms": 5000}, times=1)
    h = await make_service(emulator, model, ttft_timeout_s=0.3, read_timeout_s=0.3)
    try:
        new_session(h, tools=[TOOL])
        first = await collect(turn(h, "t1", "查一下"))
        call = next(e.data for e in first if e.name == "tool_call")
        run = h.service.submit_tool_output("c1", ToolOutputRequest(
            call_id=call["call_id"], output={"ok": True}, respond=True))
        assert run is not None
        more = await collect(run)
        end = the_end(more)
        assert end["reason"] == "timeout" and end["error"]["code"] == "timeout"
        assert sentences(more) == []  # the caller's request is under way: no "didn't hear"
        history = h.service.get_view("c1").history
        assert [i["type"] for i in history] == ["user", "function_call", "function_call_output"]
    finally:
        await h.close()
