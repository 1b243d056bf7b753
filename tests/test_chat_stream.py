"""Chat turns against the real emulator: sentence timing, speakable text, text mode, usage,
both API styles, diagnostics records."""

from __future__ import annotations

import pytest

from callout_server.upstream import Upstreams
from tests.support.chat import (
    TimedLLM,
    chunks_of,
    collect,
    make_service,
    names,
    new_session,
    sentences,
    the_end,
    turn,
)

STYLES = ["chat-completions", "responses"]
OPENING = ["您好", "，我是", "客服", "小王", "。", "请问", "您现在", "方便", "吗", "？",
           "我想", "跟您", "确认", "一下", "订单", "。", "大概", "两分钟", "。", "谢谢", "！"]


@pytest.mark.parametrize("style", STYLES)
async def test_first_sentence_leaves_at_its_boundary(emulator, style):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": OPENING, "token_delay_ms": 40}, times=1)
    h = await make_service(emulator, model, api_style=style)
    timed = TimedLLM(h.llm)
    h.service._upstreams = Upstreams(timed)
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "你好"))
        said = sentences(events)
        assert said[0] == "您好，我是客服小王。"
        # Later sentences are batched (default 3), the rest flushed at the end.
        assert said[1:] == ["请问您现在方便吗？我想跟您确认一下订单。大概两分钟。", "谢谢！"]
        assert [e.data["index"] for e in events if e.name == "sentence"] == [0, 1, 2]
        boundary = next(t for t, text in timed.deltas if text == "。")
        first = next(e for e in events if e.name == "sentence")
        assert first.at - boundary < 0.02  # measured ~0.1 ms; CI slack
        # ...and long before the stream ended (16 more tokens at 40 ms).
        assert the_end(events)["reason"] == "completed"
        assert events[-1].at - first.at > 0.4
    finally:
        await h.close()


async def test_long_chinese_opening_cut_at_first_clause(emulator):
    model = emulator.unique_model("chatm")
    text = "感谢您一直以来对我们公司的支持和信任，今天给您打电话是想跟您确认一下上周的订单。"
    await emulator.script(model, {"chunks": chunks_of(text, 2), "token_delay_ms": 5}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "喂"))
        assert sentences(events) == ["感谢您一直以来对我们公司的支持和信任，",
                                     "今天给您打电话是想跟您确认一下上周的订单。"]
    finally:
        await h.close()


async def test_audio_output_is_speakable(emulator):
    model = emulator.unique_model("chatm")
    reply = ("**好的**😀，详情请看 https://example.com/a?b=1 。\n"
             "- 第一步：打开“设置”🔧。\n- 第二步：点击 `确认`。")
    await emulator.script(model, {"chunks": chunks_of(reply, 3)}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "怎么操作"))
        spoken = "".join(sentences(events))
        for bad in ("*", "😀", "🔧", "http", "example.com", "`", "“", "- "):
            assert bad not in spoken, spoken
        assert "好的" in spoken and '打开"设置"' in spoken and "确认。" in spoken
        # The history keeps the model's own text of a completed answer.
        assert h.service.get_view("c1").history[-1]["text"] == reply
    finally:
        await h.close()


@pytest.mark.parametrize("style", STYLES)
async def test_text_output_forwards_deltas_unfiltered(emulator, style):
    model = emulator.unique_model("chatm")
    pieces = ["**标题**", "\n\n", "- 一😀", "\n- 二", " https://x.cn", "。结束"]
    await emulator.script(model, {"chunks": pieces}, times=1)
    h = await make_service(emulator, model, api_style=style)
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "列一下", output="text"))
        deltas = [e.data for e in events if e.name == "text_delta"]
        assert [d["text"] for d in deltas] == pieces  # unsplit, unfiltered, as they came
        assert all(d["turn_id"] == "t1" for d in deltas)
        assert "sentence" not in names(events)
        assert the_end(events) == {"event": "end", "turn_id": "t1", "reason": "completed",
                                   "error": None}
    finally:
        await h.close()


@pytest.mark.parametrize("style", STYLES)
async def test_usage_before_end_and_call_recorded(emulator, style):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好的。", "reasoning": "想一想",
                                  "reasoning_tokens": 3}, times=1)
    h = await make_service(emulator, model, api_style=style)
    try:
        new_session(h, call_id="call-usage")
        events = await collect(turn(h, "t1", "嗯", call_id="call-usage"))
        assert names(events)[-2:] == ["usage", "end"]
        usage = events[-2].data
        assert usage["prompt_tokens"] and usage["completion_tokens"]
        assert "想一想" not in "".join(sentences(events))  # reasoning is never spoken
        [rec] = h.recorder.records
        assert (rec.tier, rec.code, rec.call_id, rec.config_id) == ("chat", "ok", "call-usage", 42)
        assert rec.ttft_ms is not None and rec.latency_ms is not None
        assert rec.prompt_tokens == usage["prompt_tokens"]
        body = (await emulator.requests(model))[0]
        assert body["stream"] is True
    finally:
        await h.close()


async def test_request_carries_system_prompt_tools_and_overrides(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": "好。"}, times=1)
    h = await make_service(emulator, model)
    tool = {"type": "function", "name": "lookup", "description": "查订单",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
    try:
        new_session(h, system_prompt="你是客服小王", tools=[tool],
                    overrides={"max_tokens": 64, "temperature": 0.3})
        await collect(turn(h, "t1", "查一下"))
        body = (await emulator.requests(model))[0]["body"]
        assert body["messages"][0] == {"role": "system", "content": "你是客服小王"}
        assert body["tools"][0]["function"]["name"] == "lookup"
        assert body["max_tokens"] == 64 and body["temperature"] == 0.3
        assert body["chat_template_kwargs"] == {"enable_thinking": False}  # the chat default
    finally:
        await h.close()


async def test_finish_without_answer_is_an_error(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"content": ""}, times=1)
    h = await make_service(emulator, model)
    try:
        new_session(h)
        events = await collect(turn(h, "t1", "喂"))
        end = the_end(events)
        assert end["reason"] == "error" and end["error"]["code"] == "empty_output"
        assert not h.service.get("c1").in_response
        assert h.recorder.records[0].code == "empty_output"
    finally:
        await h.close()
