"""ChatHistory: bounds, whole-turn eviction, call/output pairing, background compaction."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from callout_server.tiers.chat.history import SUMMARY_HEADER, ChatHistory, UnknownCallId
from callout_server.tiers.chat.history_items import AssistantMessage, FunctionCall, UserMessage


def _turn(h: ChatHistory, n: int, reply: bool = True) -> None:
    h.add_user_message(f"t{n}", f"user {n}")
    if reply:
        h.add_assistant_message(f"assistant {n}")


def _user_texts(h: ChatHistory) -> list[str]:
    return [i.text for i in h.items if isinstance(i, UserMessage)]


def assert_no_orphans(messages: list[dict[str, Any]]) -> None:
    """Every tool_call is answered right after its assistant message; every tool answers one."""
    index = 0
    while index < len(messages):
        msg = messages[index]
        if msg["role"] == "tool":
            raise AssertionError(f"orphan tool message at {index}: {msg}")
        if msg["role"] == "assistant" and msg.get("tool_calls"):
            ids = [c["id"] for c in msg["tool_calls"]]
            answers = [m["tool_call_id"] for m in messages[index + 1 : index + 1 + len(ids)]]
            assert sorted(answers) == sorted(ids), (ids, answers)
            for call in msg["tool_calls"]:
                assert call["type"] == "function"
                json.loads(call["function"]["arguments"])
            index += 1 + len(ids)
            continue
        index += 1


# --- shape -------------------------------------------------------------------------------


def test_messages_shape() -> None:
    h = ChatHistory("你是客服。", size=5)
    h.add_user_message("t1", "帮我查余额")
    h.add_assistant_message("好的，我帮您查一下。")
    h.add_tool_call("call_1", "get_balance", {"account": "尾号1234"})
    h.append_tool_output("call_1", '{"balance": 100}')
    h.add_assistant_message("您的余额是100元。")
    assert h.to_messages() == [
        {"role": "system", "content": "你是客服。"},
        {"role": "user", "content": "帮我查余额"},
        {
            "role": "assistant",
            "content": "好的，我帮您查一下。",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_balance", "arguments": '{"account": "尾号1234"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"balance": 100}'},
        {"role": "assistant", "content": "您的余额是100元。"},
    ]


def test_no_system_message_without_prompt() -> None:
    h = ChatHistory(None)
    h.add_user_message("t1", "hi")
    assert h.to_messages() == [{"role": "user", "content": "hi"}]


def test_pending_call_not_rendered_and_parallel_calls_grouped() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "q")
    h.add_tool_call("a", "f", {})
    h.add_tool_call("b", "g", "{}")
    assert h.to_messages() == [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    h.append_tool_output("b", "B")
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["b"]
    h.append_tool_output("a", "A")
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["a", "b"]
    assert [m["tool_call_id"] for m in msgs[3:]] == ["a", "b"]


def test_to_public() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "q", revision=1)
    h.add_tool_call("a", "f", {"x": 1})
    h.record_interrupted_assistant("我正在")
    assert h.to_public() == [
        {"type": "user", "turn_id": "t1", "revision": 1, "text": "q"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": {"x": 1},
         "status": "pending"},
        {"type": "assistant", "text": "我正在", "interrupted": True},
    ]  # fmt: skip
    h.append_tool_output("a", "ok")
    public = h.to_public()
    assert public[-2]["status"] == "completed"
    assert public[-1] == {"type": "function_call_output", "call_id": "a", "output": "ok"}
    json.dumps(public)


# --- bounds ------------------------------------------------------------------------------


def test_soft_limit_evicts_oldest_whole_turns() -> None:
    h = ChatHistory("s", size=3)
    for n in range(5):
        _turn(h, n)
    assert h.user_turns() == 5  # appends do not enforce the soft limit
    assert h.trim_if_needed() == 2
    assert _user_texts(h) == ["user 2", "user 3", "user 4"]
    assert isinstance(h.items[0], UserMessage)  # no headless assistant message left
    assert h.trim_if_needed() == 0


def test_hard_cap_on_every_append() -> None:
    h = ChatHistory("s", size=2)
    for n in range(10):
        _turn(h, n)
        assert h.user_turns() <= 4
    assert _user_texts(h) == ["user 6", "user 7", "user 8", "user 9"]
    assert isinstance(h.items[0], UserMessage)


def test_eviction_takes_calls_and_outputs_with_their_turn() -> None:
    h = ChatHistory("s", size=1)
    h.add_user_message("t1", "q1")
    h.add_tool_call("a", "f", {})
    h.append_tool_output("a", "A")
    h.add_assistant_message("r1")
    _turn(h, 2)
    h.trim_if_needed()
    assert [type(i) for i in h.items] == [UserMessage, AssistantMessage]
    assert_no_orphans(h.to_messages())


# --- pairing -----------------------------------------------------------------------------


def test_unknown_call_id() -> None:
    h = ChatHistory("s")
    _turn(h, 1)
    with pytest.raises(UnknownCallId) as info:
        h.append_tool_output("nope", "x")
    assert info.value.code == "unknown_call_id" and info.value.status == 409


def test_duplicate_output_is_unknown() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "q")
    h.add_tool_call("a", "f", {})
    h.append_tool_output("a", "A")
    with pytest.raises(UnknownCallId):
        h.append_tool_output("a", "again")


def test_evicted_call_is_reinjected_with_its_output() -> None:
    h = ChatHistory("s", size=1)
    h.add_user_message("t1", "查一下")
    h.add_tool_call("a", "lookup", {"q": 1})
    _turn(h, 2)
    h.trim_if_needed()  # turn t1, holding the pending call, is gone
    assert not any(isinstance(i, FunctionCall) for i in h.items)
    assert h.pending_call_ids == ["a"]
    h.append_tool_output("a", "result")
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert msgs[-2]["tool_calls"][0]["id"] == "a"
    assert msgs[-1] == {"role": "tool", "tool_call_id": "a", "content": "result"}
    assert h.pending_call_ids == []


def test_late_output_moves_call_next_to_it() -> None:
    h = ChatHistory("s", size=5)
    h.add_user_message("t1", "q1")
    h.add_tool_call("a", "f", {})
    h.add_user_message("t2", "q2")  # the caller spoke before the tool answered
    h.add_assistant_message("r2")
    h.append_tool_output("a", "A")
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert [m["role"] for m in msgs] == ["system", "user", "user", "assistant", "tool"]
    assert msgs[3]["content"] == "r2" and msgs[3]["tool_calls"][0]["id"] == "a"
    assert sum(isinstance(i, FunctionCall) for i in h.items) == 1


def test_replace_user_message_in_place() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "我想")
    h.add_user_message("t1", "我想查账单", revision=1)
    assert _user_texts(h) == ["我想查账单"]
    assert h.replace_user_message("t1", 2, "我想查账单明细") is True
    assert h.replace_user_message("t1", 1, "旧的") is False  # stale revision ignored
    h.add_user_message("t1", "重复", revision=2)  # same revision: no duplicate
    assert _user_texts(h) == ["我想查账单明细"]
    assert h.replace_user_message("t9", 1, "x") is None
    assert h.user_turns() == 1


def test_interrupted_assistant_keeps_only_sent_text() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "q")
    h.record_interrupted_assistant("您好，我是")
    h.record_interrupted_assistant("  ")  # nothing was said: nothing recorded
    (_, msg) = h.items
    assert isinstance(msg, AssistantMessage)
    assert msg.text == "您好，我是" and msg.interrupted
    assert h.to_messages()[-1] == {"role": "assistant", "content": "您好，我是"}


def test_reset_keeps_system_prompt_and_bumps_generation() -> None:
    h = ChatHistory("s")
    h.add_user_message("t1", "q")
    h.add_tool_call("a", "f", {})
    gen = h.generation
    h.reset()
    assert h.generation == gen + 1
    assert h.to_messages() == [{"role": "system", "content": "s"}]
    with pytest.raises(UnknownCallId):
        h.append_tool_output("a", "x")
    h.close()
    assert h.generation == gen + 2


def test_constructor_validation() -> None:
    with pytest.raises(ValueError):
        ChatHistory("s", size=0)
    with pytest.raises(ValueError):
        ChatHistory("s", compact_history=True)


# --- compaction --------------------------------------------------------------------------


class FakeSummariser:
    def __init__(self, result: str = "summary", *, block: bool = False) -> None:
        self.result = result
        self.calls: list[list[dict[str, Any]]] = []
        self.release = asyncio.Event()
        if not block:
            self.release.set()
        self.swallow_cancel = False
        self.fail: Exception | None = None

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.calls.append(messages)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            if not self.swallow_cancel:
                raise
        if self.fail is not None:
            raise self.fail
        return self.result


def _compacting(size: int = 4, **kw: Any) -> tuple[ChatHistory, FakeSummariser]:
    fake = FakeSummariser(**kw)
    return ChatHistory("sys", size=size, compact_history=True, summarise=fake), fake


async def test_compaction_splices_summary_and_keeps_recent_turns() -> None:
    h, fake = _compacting(size=4)
    for n in range(5):
        _turn(h, n)
    assert h.trim_if_needed() == 0
    assert h.compaction_in_flight
    await h.wait_compaction()
    assert len(fake.calls) == 1
    assert [m["content"] for m in fake.calls[0] if m["role"] == "user"] == [
        "user 0", "user 1", "user 2",
    ]  # fmt: skip
    assert _user_texts(h) == ["user 3", "user 4"]  # newest size//2 turns verbatim
    msgs = h.to_messages()
    assert msgs[0] == {"role": "system", "content": f"sys\n\n{SUMMARY_HEADER}\nsummary"}
    assert not h.compaction_in_flight
    assert h.to_public()[0] == {"type": "summary", "text": "summary"}


async def test_second_compaction_folds_previous_summary_in() -> None:
    h, fake = _compacting(size=2)
    for n in range(3):
        _turn(h, n)
    h.trim_if_needed()
    await h.wait_compaction()
    fake.result = "summary 2"
    for n in range(3, 5):
        _turn(h, n)
    h.trim_if_needed()
    await h.wait_compaction()
    assert fake.calls[1][0] == {"role": "system", "content": f"{SUMMARY_HEADER}\nsummary"}
    assert h.summary == "summary 2"
    assert _user_texts(h) == ["user 4"]


async def test_single_flight() -> None:
    h, fake = _compacting(size=4, block=True)
    for n in range(5):
        _turn(h, n)
    h.trim_if_needed()
    await asyncio.sleep(0)
    _turn(h, 5)
    assert h.trim_if_needed() == 0  # skipped, not a second compaction nor an eviction
    await asyncio.sleep(0)
    assert len(fake.calls) == 1
    fake.release.set()
    await h.wait_compaction()
    assert len(fake.calls) == 1
    assert _user_texts(h) == ["user 3", "user 4", "user 5"]


async def test_newest_turn_never_compacted_and_two_turns_needed() -> None:
    h, fake = _compacting(size=2)  # keep 1 turn verbatim
    for n in range(3):
        _turn(h, n)
    h.trim_if_needed()
    await h.wait_compaction()
    assert [m["content"] for m in fake.calls[0] if m["role"] == "user"] == ["user 0", "user 1"]
    assert _user_texts(h) == ["user 2"]
    # size 1: one compactable turn is not worth a model call; evict instead
    h1, fake1 = _compacting(size=1)
    _turn(h1, 0)
    _turn(h1, 1)
    assert h1.trim_if_needed() == 1
    await h1.wait_compaction()
    assert fake1.calls == []
    assert _user_texts(h1) == ["user 1"]


@pytest.mark.parametrize("op", ["reset", "close"])
async def test_reset_or_close_during_compaction_discards_result(op: str) -> None:
    h, fake = _compacting(size=2, block=True)
    fake.swallow_cancel = True  # the result still arrives: the generation check must drop it
    for n in range(3):
        _turn(h, n)
    h.trim_if_needed()
    await asyncio.sleep(0)
    getattr(h, op)()
    if op == "reset":
        _turn(h, 10)
    fake.release.set()
    await h.wait_compaction()
    assert h.summary is None
    if op == "reset":
        assert _user_texts(h) == ["user 10"]
    else:
        assert _user_texts(h) == ["user 0", "user 1", "user 2"]


async def test_closed_history_does_not_start_compaction() -> None:
    h, fake = _compacting(size=2)
    h.close()
    for n in range(3):
        _turn(h, n)
    assert h.trim_if_needed() == 1  # falls back to eviction
    assert fake.calls == []


@pytest.mark.parametrize("failure", ["exception", "empty"])
async def test_failed_compaction_leaves_history_unchanged(failure: str) -> None:
    h, fake = _compacting(size=2, result="   ")
    if failure == "exception":
        fake.fail = RuntimeError("model down")
    for n in range(3):
        _turn(h, n)
    before = h.to_messages()
    h.trim_if_needed()
    await h.wait_compaction()
    assert h.to_messages() == before
    assert not h.compaction_in_flight  # a later trim may try again
    fake.fail, fake.result = None, "ok"
    h.trim_if_needed()
    await h.wait_compaction()
    assert h.summary == "ok"


async def test_history_changed_under_compaction_discards_result() -> None:
    h, fake = _compacting(size=2, block=True)
    for n in range(3):
        _turn(h, n)
    h.trim_if_needed()
    await asyncio.sleep(0)
    for n in range(3, 6):
        _turn(h, n)  # the hard cap (4) evicts turns that are being compacted
    fake.release.set()
    await h.wait_compaction()
    assert h.summary is None
    assert _user_texts(h) == ["user 2", "user 3", "user 4", "user 5"]


async def test_compaction_preserves_call_output_pairs() -> None:
    h, fake = _compacting(size=2, block=True)
    h.add_user_message("t0", "q0")
    h.add_tool_call("done", "f", {"n": 0})
    h.append_tool_output("done", "D")
    h.add_user_message("t1", "q1")
    h.add_tool_call("pending", "g", {"n": 1})  # no output yet
    h.add_user_message("t2", "q2")
    h.trim_if_needed()
    await asyncio.sleep(0)
    sent = fake.calls[0]
    assert_no_orphans(sent)
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["done"]
    fake.release.set()
    await h.wait_compaction()
    assert h.summary == "summary"
    assert _user_texts(h) == ["q2"]
    assert h.pending_call_ids == ["pending"]
    h.append_tool_output("pending", "P")  # the compacted call is re-injected
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert msgs[-1] == {"role": "tool", "tool_call_id": "pending", "content": "P"}


async def test_output_arriving_during_compaction_keeps_pair() -> None:
    h, fake = _compacting(size=2, block=True)
    h.add_user_message("t0", "q0")
    h.add_tool_call("a", "f", {})
    _turn(h, 1)
    _turn(h, 2)
    h.trim_if_needed()
    await asyncio.sleep(0)
    h.append_tool_output("a", "A")  # moves the call out of the range being compacted
    fake.release.set()
    await h.wait_compaction()
    assert h.summary is None  # head changed: result discarded, nothing lost
    msgs = h.to_messages()
    assert_no_orphans(msgs)
    assert msgs[-1]["role"] == "tool"
