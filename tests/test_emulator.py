"""The vendor emulator, driven over HTTP with plain httpx against a real emulator process.

Every test uses its own model name (``emulator.unique_model``) so scripts and recorded
requests never leak between tests.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from callout_server.emulator.textgen import DEFAULT_ANSWER
from tests.fixtures.emulator import EmulatorHandle

MSG = [{"role": "user", "content": "你好"}]


async def post(emulator: EmulatorHandle, persona: str, body: dict[str, Any],
               path: str = "chat/completions") -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as c:
        return await c.post(f"{emulator.base_url(persona)}/{path}", json=body,
                            headers={"Authorization": "Bearer sk-secret"})


async def stream_lines(emulator: EmulatorHandle, persona: str, body: dict[str, Any],
                       path: str = "chat/completions") -> list[str]:
    """All non-empty SSE lines (data, event and comment lines), in order."""
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=10) as c, c.stream(
        "POST", f"{emulator.base_url(persona)}/{path}", json={**body, "stream": True}
    ) as r:
        assert r.status_code == 200, await r.aread()
        assert r.headers["content-type"].startswith("text/event-stream")
        async for line in r.aiter_lines():
            if line:
                lines.append(line)
    return lines


def chunks(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(x[6:]) for x in lines if x.startswith("data: ") and x != "data: [DONE]"]


def joined(objs: list[dict[str, Any]], field: str) -> str:
    return "".join(
        c["choices"][0]["delta"].get(field) or "" for c in objs if c["choices"]
    )


def message(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    return resp.json()["choices"][0]["message"]  # type: ignore[no-any-return]


# --- personas: thinking switches and where reasoning lands -------------------------------


async def test_vllm_qwen3_thinks_by_default_and_reasoning_is_in_message_reasoning(emulator):
    msg = message(await post(emulator, "vllm", {"model": "Qwen/Qwen3-8B", "messages": MSG}))
    assert msg["reasoning"] and msg["content"] == DEFAULT_ANSWER
    assert "reasoning_content" not in msg


@pytest.mark.parametrize("persona", ["vllm", "gpustack"])
async def test_vllm_chat_template_kwargs_switch_honoured(emulator, persona):
    body = {"model": "Qwen3-32B", "messages": MSG,
            "chat_template_kwargs": {"enable_thinking": False}}
    msg = message(await post(emulator, persona, body))
    assert "reasoning" not in msg and msg["content"] == DEFAULT_ANSWER


async def test_plain_v1_is_vllm_and_ignores_unknown_top_level_keys(emulator):
    async with httpx.AsyncClient() as c:
        r = await c.post(f"{emulator.url}/v1/chat/completions", json={
            "model": "qwen3-8b", "messages": MSG, "enable_thinking": False,
            "thinking": {"type": "disabled"}})
    assert message(r)["reasoning"]  # silent no-op: still thinking


async def test_vllm_deepseek_v31_reads_thinking_not_enable_thinking(emulator):
    base = {"model": "deepseek-ai/DeepSeek-V3.1", "messages": MSG}
    assert "reasoning" not in message(await post(emulator, "vllm", base))  # default off
    wrong = {**base, "chat_template_kwargs": {"enable_thinking": True}}
    assert "reasoning" not in message(await post(emulator, "vllm", wrong))
    right = {**base, "chat_template_kwargs": {"thinking": True}}
    assert message(await post(emulator, "vllm", right))["reasoning"]


async def test_vllm_noparser_puts_think_tags_inline(emulator):
    msg = message(await post(emulator, "vllm-noparser", {"model": "qwen3-8b", "messages": MSG}))
    assert msg["content"].startswith("<think>\n")
    assert msg["content"].endswith("</think>\n\n" + DEFAULT_ANSWER)
    # R1 templates pre-insert <think>: only the closing tag is generated.
    r1 = message(await post(emulator, "vllm-noparser",
                            {"model": "DeepSeek-R1-Distill-Qwen-7B", "messages": MSG}))
    assert "<think>" not in r1["content"] and "</think>" in r1["content"]


async def test_vllm_noparser_streams_inline_reasoning(emulator):
    lines = await stream_lines(emulator, "vllm-noparser", {
        "model": "qwen3-8b", "messages": MSG, "max_tokens": 40})
    text = joined(chunks(lines), "content")
    assert text.startswith("<think>\n") and "</think>" not in text  # cut off mid-thought


async def test_deepseek_thinking_switch_and_reasoning_content(emulator):
    on = message(await post(emulator, "deepseek", {"model": "deepseek-v4-flash",
                                                   "messages": MSG}))
    assert on["reasoning_content"]
    off = message(await post(emulator, "deepseek", {
        "model": "deepseek-v4-flash", "messages": MSG, "thinking": {"type": "disabled"}}))
    assert "reasoning_content" not in off
    ignored = message(await post(emulator, "deepseek", {
        "model": "deepseek-v4-pro", "messages": MSG,
        "chat_template_kwargs": {"enable_thinking": False}}))
    assert ignored["reasoning_content"]
    chat = message(await post(emulator, "deepseek", {"model": "deepseek-chat", "messages": MSG}))
    assert "reasoning_content" not in chat


async def test_dashscope_enable_thinking_and_non_streaming_qwen3_error(emulator):
    r = await post(emulator, "dashscope", {"model": "qwen3-32b", "messages": MSG})
    assert r.status_code == 400
    assert r.json()["error"]["message"].endswith(
        "parameter.enable_thinking must be set to false for non-streaming calls")
    r = await post(emulator, "dashscope", {"model": "qwen3-32b", "messages": MSG,
                                           "chat_template_kwargs": {"enable_thinking": False}})
    assert r.status_code == 400  # chat_template_kwargs is not read by DashScope
    ok = message(await post(emulator, "dashscope", {"model": "qwen3-32b", "messages": MSG,
                                                    "enable_thinking": False}))
    assert "reasoning_content" not in ok
    lines = await stream_lines(emulator, "dashscope", {"model": "qwen3.5-plus",
                                                       "messages": MSG})
    assert joined(chunks(lines), "reasoning_content")  # Qwen3.5 default on


async def test_siliconflow_top_level_switch_and_thinking_budget(emulator):
    off = message(await post(emulator, "siliconflow", {
        "model": "Qwen/Qwen3-8B", "messages": MSG, "enable_thinking": False}))
    assert "reasoning_content" not in off
    r = await post(emulator, "siliconflow", {
        "model": "Qwen/Qwen3-8B", "messages": MSG, "thinking_budget": 128, "max_tokens": 100})
    body = r.json()
    # max_tokens does not count CoT here; thinking_budget bounds it and the answer still runs.
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == 128
    assert body["choices"][0]["message"]["content"] == DEFAULT_ANSWER


async def test_openrouter_reasoning_switch_and_mandatory(emulator):
    on = message(await post(emulator, "openrouter", {"model": "qwen/qwen3-8b",
                                                     "messages": MSG}))
    assert on["reasoning"] and on["reasoning_details"][0]["type"] == "reasoning.text"
    for reasoning in ({"effort": "none"}, {"enabled": False}):
        off = message(await post(emulator, "openrouter", {
            "model": "qwen/qwen3-8b", "messages": MSG, "reasoning": reasoning}))
        assert "reasoning" not in off
    r = await post(emulator, "openrouter", {"model": "openai/o3-mini", "messages": MSG,
                                            "reasoning": {"effort": "none"}})
    assert r.status_code == 400 and "mandatory" in r.json()["error"]["message"]


async def test_ollama_reasoning_effort(emulator):
    on = message(await post(emulator, "ollama", {"model": "qwen3:8b", "messages": MSG}))
    assert on["reasoning"]
    off = message(await post(emulator, "ollama", {"model": "qwen3:8b", "messages": MSG,
                                                  "reasoning_effort": "none"}))
    assert "reasoning" not in off
    bad = await post(emulator, "ollama", {"model": "qwen3:8b", "messages": MSG,
                                          "reasoning_effort": "minimal"})
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("invalid reasoning value")


@pytest.mark.parametrize(("persona", "model"), [
    ("zai", "glm-4.6"), ("kimi", "kimi-k2.5"), ("ark", "doubao-seed-1-6-250615")])
async def test_thinking_type_disabled_personas(emulator, persona, model):
    on = message(await post(emulator, persona, {"model": model, "messages": MSG}))
    assert on["reasoning_content"]
    off = message(await post(emulator, persona, {"model": model, "messages": MSG,
                                                  "thinking": {"type": "disabled"}}))
    assert "reasoning_content" not in off
    ignored = message(await post(emulator, persona, {"model": model, "messages": MSG,
                                                      "enable_thinking": False}))
    assert ignored["reasoning_content"]


async def test_ark_rejects_illegal_thinking_type(emulator):
    r = await post(emulator, "ark", {"model": "doubao-seed-1-6", "messages": MSG,
                                     "thinking": {"type": "off"}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidParameter"


@pytest.mark.parametrize("persona", ["sglang", "llamacpp"])
async def test_template_kwargs_servers_use_reasoning_content(emulator, persona):
    on = message(await post(emulator, persona, {"model": "Qwen3-8B", "messages": MSG}))
    assert on["reasoning_content"]
    off = message(await post(emulator, persona, {
        "model": "Qwen3-8B", "messages": MSG, "chat_template_kwargs": {"enable_thinking": False}}))
    assert "reasoning_content" not in off


async def test_non_reasoning_family_never_reasons(emulator):
    for persona, model in (("openai", "gpt-4o"), ("vllm", "Qwen2.5-7B-Instruct"),
                           ("deepseek", "deepseek-chat")):
        r = await post(emulator, persona, {"model": model, "messages": MSG})
        assert r.json()["usage"]["completion_tokens"] == len(DEFAULT_ANSWER)


# --- OpenAI strictness --------------------------------------------------------------------


@pytest.mark.parametrize("key", ["enable_thinking", "chat_template_kwargs", "thinking",
                                 "reasoning", "include_reasoning"])
async def test_openai_rejects_unknown_parameters(emulator, key):
    r = await post(emulator, "openai", {"model": "gpt-4o", "messages": MSG, key: False})
    assert r.status_code == 400
    assert r.json() == {"error": {"message": f"Unknown parameter: '{key}'.",
                                  "type": "invalid_request_error", "param": key,
                                  "code": "unknown_parameter"}}


async def test_openai_reasoning_model_rules(emulator):
    r = await post(emulator, "openai", {"model": "gpt-5-mini", "messages": MSG,
                                        "max_tokens": 100})
    assert r.json()["error"]["code"] == "unsupported_parameter"
    assert "max_completion_tokens" in r.json()["error"]["message"]
    r = await post(emulator, "openai", {"model": "gpt-4o", "messages": MSG,
                                        "reasoning_effort": "low"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "reasoning_effort"
    r = await post(emulator, "openai", {"model": "gpt-5", "messages": MSG,
                                        "reasoning_effort": "none"})
    assert r.json()["error"]["code"] == "unsupported_value"
    r = await post(emulator, "openai", {"model": "gpt-5.1", "messages": MSG,
                                        "reasoning_effort": "minimal"})
    assert r.json()["error"]["code"] == "unsupported_value"


async def test_openai_never_returns_reasoning_text_only_tokens(emulator):
    r = await post(emulator, "openai", {"model": "o4-mini", "messages": MSG,
                                        "reasoning_effort": "low"})
    body = r.json()
    msg = body["choices"][0]["message"]
    assert set(msg) == {"role", "content"} and msg["content"] == DEFAULT_ANSWER
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == 200
    none = await post(emulator, "openai", {"model": "gpt-5.1", "messages": MSG,
                                           "reasoning_effort": "none"})
    assert none.json()["usage"]["completion_tokens_details"]["reasoning_tokens"] == 0


# --- budget realism -----------------------------------------------------------------------


@pytest.mark.parametrize(("persona", "model", "key", "empty"), [
    ("openai", "gpt-5-mini", "max_completion_tokens", ""),
    ("deepseek", "deepseek-v4-flash", "max_tokens", None),
    ("vllm", "qwen3-8b", "max_tokens", None),
    ("dashscope", "qwen3.5-plus", "max_tokens", ""),
])
async def test_budget_exhausted_while_reasoning(emulator, persona, model, key, empty):
    r = await post(emulator, persona, {"model": model, "messages": MSG, key: 256})
    body = r.json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == empty
    assert body["usage"]["completion_tokens"] == 256
    details = body["usage"].get("completion_tokens_details")
    if details is not None:
        assert details["reasoning_tokens"] == 256


async def test_budget_exhausted_during_answer_truncates(emulator):
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"reasoning": "想一想", "content": "一二三四五六七八九十"})
    body = (await post(emulator, "vllm", {"model": model, "messages": MSG,
                                          "max_tokens": 8})).json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["choices"][0]["message"]["content"] == "一二三四五"
    assert body["usage"]["completion_tokens"] == 8


async def test_scripted_reasoning_tokens_spend_budget_without_text(emulator):
    model = emulator.unique_model("deepseek-v4-flash")
    await emulator.script(model, {"reasoning_tokens": 2000, "content": "好"})
    body = (await post(emulator, "deepseek", {"model": model, "messages": MSG,
                                              "max_tokens": 1024})).json()
    msg = body["choices"][0]["message"]
    assert body["choices"][0]["finish_reason"] == "length" and msg["content"] is None
    assert "reasoning_content" not in msg
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == 1024


# --- default replies ----------------------------------------------------------------------


async def test_json_mode_picks_first_intent_from_prompt(emulator):
    messages = [{"role": "system", "content": "判断客户意图。可选意图：同意、拒绝、稍后再打"},
                {"role": "user", "content": "好的"}]
    msg = message(await post(emulator, "openai", {
        "model": "gpt-4o", "messages": messages, "response_format": {"type": "json_object"}}))
    assert json.loads(msg["content"]) == {"intent": "同意"}
    schema = {"type": "object", "required": ["intent", "confidence"], "properties": {
        "intent": {"type": "string", "enum": ["agree", "refuse"]},
        "confidence": {"type": "number"}}}
    msg = message(await post(emulator, "openai", {
        "model": "gpt-4o", "messages": MSG,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x",
                                                                   "schema": schema}}}))
    assert json.loads(msg["content"]) == {"intent": "agree", "confidence": 0}


# --- streaming ----------------------------------------------------------------------------


async def test_stream_reasoning_content_and_include_usage(emulator):
    lines = await stream_lines(emulator, "deepseek", {
        "model": "deepseek-v4-flash", "messages": MSG,
        "stream_options": {"include_usage": True}})
    assert lines[-1] == "data: [DONE]"
    objs = chunks(lines)
    assert objs[0]["choices"][0]["delta"]["role"] == "assistant"
    assert joined(objs, "reasoning_content") and joined(objs, "content") == DEFAULT_ANSWER
    assert objs[-2]["choices"][0]["finish_reason"] == "stop"
    assert objs[-1]["choices"] == [] and objs[-1]["usage"]["completion_tokens"] > 0
    assert all(o["usage"] is None for o in objs[:-1])
    fast = emulator.unique_model("deepseek-chat")
    await emulator.script(fast, {"ttft_ms": 0, "token_delay_ms": 0})  # the stock text, unpaced
    plain = chunks(await stream_lines(emulator, "deepseek", {"model": fast, "messages": MSG}))
    assert all("usage" not in o for o in plain)


async def test_stream_tool_call_argument_deltas(emulator):
    model = emulator.unique_model("tools")
    args = {"phone": "13800000000", "note": "客户要求明天下午回电"}
    await emulator.script(model, {"tool_calls": [{"name": "schedule_callback",
                                                  "arguments": args}]})
    objs = chunks(await stream_lines(emulator, "vllm", {"model": model, "messages": MSG}))
    deltas = [d for o in objs for d in o["choices"][0]["delta"].get("tool_calls", [])]
    assert deltas[0]["id"].startswith("call_") and deltas[0]["function"]["name"] == (
        "schedule_callback")
    assert len(deltas) > 3 and all(d["index"] == 0 for d in deltas)
    assert json.loads("".join(d["function"]["arguments"] for d in deltas)) == args
    assert objs[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_explicit_chunks_and_finish_reason_override(emulator):
    model = emulator.unique_model("chunks")
    await emulator.script(model, {"chunks": ["您好，", "请问", "是张先生吗？"],
                                  "finish_reason": "insufficient_system_resource"})
    objs = chunks(await stream_lines(emulator, "deepseek", {"model": model, "messages": MSG}))
    assert [o["choices"][0]["delta"].get("content") for o in objs[1:4]] == [
        "您好，", "请问", "是张先生吗？"]
    assert objs[-1]["choices"][0]["finish_reason"] == "insufficient_system_resource"


@pytest.mark.parametrize(("persona", "finish"), [("zai", "sensitive"), ("ollama", "load"),
                                                 ("vllm", None)])
async def test_vendor_finish_reasons_via_script(emulator, persona, finish):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "好", "finish_reason": finish}, persona=persona)
    body = (await post(emulator, persona, {"model": model, "messages": MSG})).json()
    assert body["choices"][0]["finish_reason"] == finish


# --- Responses API ------------------------------------------------------------------------


def events(lines: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for ev, data in zip(lines[::2], lines[1::2], strict=True):
        assert ev.startswith("event: ") and data.startswith("data: ")
        payload = json.loads(data[6:])
        assert payload["type"] == ev[7:]
        out.append((ev[7:], payload))
    return out


async def test_responses_stream_vllm_reasoning_text_and_usage(emulator):
    evs = events(await stream_lines(emulator, "vllm", {"model": "qwen3-8b", "input": "你好"},
                                    path="responses"))
    kinds = [k for k, _ in evs]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.reasoning_text.delta" in kinds
    text = "".join(e["delta"] for k, e in evs if k == "response.output_text.delta")
    assert text == DEFAULT_ANSWER
    usage = evs[-1][1]["response"]["usage"]
    assert usage["output_tokens_details"]["reasoning_tokens"] == 600
    assert [e["sequence_number"] for _, e in evs] == list(range(len(evs)))


async def test_responses_openai_summary_tools_and_incomplete(emulator):
    evs = events(await stream_lines(emulator, "openai", {
        "model": "o4-mini", "input": "你好", "reasoning": {"effort": "low", "summary": "auto"}},
        path="responses"))
    assert any(k == "response.reasoning_summary_text.delta" for k, _ in evs)
    model = emulator.unique_model("gpt-4.1")
    await emulator.script(model, {"tool_calls": [{"name": "end_call", "arguments": {
        "reason": "客户挂断"}}]})
    evs = events(await stream_lines(emulator, "openai", {"model": model, "input": "再见"},
                                    path="responses"))
    args = "".join(e["delta"] for k, e in evs if k == "response.function_call_arguments.delta")
    assert json.loads(args) == {"reason": "客户挂断"}
    done = [e["item"] for k, e in evs if k == "response.output_item.done"]
    assert done[-1]["type"] == "function_call" and done[-1]["name"] == "end_call"
    r = await post(emulator, "openai", {"model": "gpt-5-mini", "input": "你好",
                                        "max_output_tokens": 300}, path="responses")
    body = r.json()
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert [o["type"] for o in body["output"]] == ["reasoning"]
    assert body["usage"]["output_tokens_details"]["reasoning_tokens"] == 300
    r = await post(emulator, "openai", {"model": "gpt-4o", "input": "x",
                                        "reasoning_effort": "low"}, path="responses")
    assert r.json()["error"]["code"] == "unknown_parameter"


async def test_responses_json_format_and_unsupported_persona(emulator):
    r = await post(emulator, "vllm", {
        "model": "gpt-4o", "input": "intents: [\"agree\", \"refuse\"]",
        "text": {"format": {"type": "json_object"}}}, path="responses")
    msg = r.json()["output"][-1]
    assert json.loads(msg["content"][0]["text"]) == {"intent": "agree"}
    r = await post(emulator, "deepseek", {"model": "deepseek-chat", "input": "x"},
                   path="responses")
    assert r.status_code == 404


# --- faults -------------------------------------------------------------------------------


async def test_ttft_and_token_delay(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"chunks": ["a", "b", "c", "d"], "ttft_ms": 300,
                                  "token_delay_ms": 100})
    start = time.monotonic()
    stamps: list[float] = []
    async with httpx.AsyncClient(timeout=5) as c, c.stream(
        "POST", f"{emulator.base_url()}/chat/completions",
        json={"model": model, "messages": MSG, "stream": True}) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: {"):
                stamps.append(time.monotonic() - start)
    assert stamps[0] >= 0.29
    # 5 paced gaps from the role chunk to the finish chunk, 100 ms each; a loaded client may
    # read the first one late, so the bound proves the pacing without demanding all 500 ms.
    assert stamps[-1] - stamps[0] >= 0.45
    model2 = emulator.unique_model()
    await emulator.script(model2, {"content": "一二三", "ttft_ms": 200, "token_delay_ms": 100})
    start = time.monotonic()
    await post(emulator, "vllm", {"model": model2, "messages": MSG})
    assert time.monotonic() - start >= 0.49  # non-streaming waits the whole generation


async def _stamps(emulator: EmulatorHandle, body: dict[str, Any]) -> tuple[list[float], str]:
    """Seconds from the request to each data event, and the streamed text."""
    start = time.monotonic()
    stamps: list[float] = []
    text = []
    async with httpx.AsyncClient(timeout=30) as c, c.stream(
            "POST", f"{emulator.base_url()}/chat/completions",
            json={"messages": MSG, "stream": True, **body}) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: {"):
                stamps.append(time.monotonic() - start)
                delta = (json.loads(line[6:])["choices"] or [{}])[0].get("delta") or {}
                text.append(delta.get("content") or "")
    return stamps, "".join(text)


UNPACED_S = 1.0  # the stock reply paced takes >= 1.9 s (0.3 s + 40 x 40 ms)


async def test_the_stock_chat_reply_streams_at_a_real_models_pace(emulator):
    """300 ms to the first token, 40 ms a chunk (pace.py): long enough to barge in on."""
    stamps, text = await _stamps(emulator, {"model": emulator.unique_model("qwen2.5-7b")})
    assert text == DEFAULT_ANSWER
    assert stamps[0] >= 0.29
    assert stamps[-1] - stamps[0] >= 0.04 * 40  # 41 tokens, paced; a slow reader only adds
    # Non-streamed, and other prompts (JSON mode): unpaced, far under the paced 1.9 s (a
    # bound a busy machine cannot break, that the paced reply cannot meet).
    start = time.monotonic()
    r = await post(emulator, "vllm", {"model": emulator.unique_model("qwen2.5-7b"),
                                      "messages": MSG})
    assert message(r)["content"] == DEFAULT_ANSWER and time.monotonic() - start < UNPACED_S
    stamps, _ = await _stamps(emulator, {"model": emulator.unique_model("qwen2.5-7b"),
                                         "response_format": {"type": "json_object"}})
    assert stamps[-1] < UNPACED_S


async def test_a_script_asks_for_speed_or_its_own_pace(emulator):
    fast = emulator.unique_model("qwen2.5-7b")
    await emulator.script(fast, {"ttft_ms": 0, "token_delay_ms": 0})  # the stock text, fast
    stamps, text = await _stamps(emulator, {"model": fast})
    assert text == DEFAULT_ANSWER and stamps[-1] < UNPACED_S
    own = emulator.unique_model("qwen2.5-7b")
    await emulator.script(own, {"token_delay_ms": 5})  # the default time to first token
    stamps, _ = await _stamps(emulator, {"model": own})
    assert stamps[0] >= 0.29 and stamps[-1] - stamps[0] < 1.0
    scripted = emulator.unique_model("qwen2.5-7b")
    await emulator.script(scripted, {"content": "好的。"})  # scripted text: its own timing
    stamps, text = await _stamps(emulator, {"model": scripted})
    assert text == "好的。" and stamps[-1] < UNPACED_S


async def test_the_whole_emulator_can_run_fast_and_a_thinking_stream_is_not_paced(emulator):
    """`--chat-ttft-ms 0 --chat-token-ms 0` (benchmarks): the stock reply at full speed."""
    from aiohttp import web

    from callout_server.emulator.pace import ChatPace
    from callout_server.emulator.server import build_app

    runner = web.AppRunner(build_app(pace=ChatPace(0, 0)), handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        stamps, text = await _stamps(EmulatorHandle(f"http://127.0.0.1:{port}"),
                                     {"model": "qwen2.5-7b"})
        assert text == DEFAULT_ANSWER and stamps[-1] < 0.25
    finally:
        await runner.cleanup()
    # 600 tokens of reasoning at 40 ms would take 24 s: a reasoning stream keeps its speed.
    stamps, _ = await _stamps(emulator, {"model": emulator.unique_model("qwen3-8b")})
    assert stamps[-1] < 1.0


@pytest.mark.parametrize(("persona", "status", "probe"), [
    ("openai", 429, lambda b: b["error"]["code"] == "rate_limit_exceeded"),
    ("dashscope", 429, lambda b: b["error"]["code"] == "limit_requests"),
    ("siliconflow", 503, lambda b: isinstance(b["code"], int) and b["data"] is None),
    ("vllm", 500, lambda b: b["error"]["type"] == "InternalServerError"),
    ("zai", 429, lambda b: b["error"]["code"] == "1302"),
])
async def test_scripted_errors_use_vendor_shape(emulator, persona, status, probe):
    model = emulator.unique_model()
    await emulator.script(model, {"status": status}, times=1)
    r = await post(emulator, persona, {"model": model, "messages": MSG})
    assert r.status_code == status and probe(r.json())
    assert (await post(emulator, persona, {"model": model, "messages": MSG})).status_code == 200


async def test_scripted_error_body_and_headers_verbatim(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"status": 429, "error_body": {"error": "slow down"},
                                  "headers": {"Retry-After": "2"}})
    r = await post(emulator, "openai", {"model": model, "messages": MSG})
    assert r.status_code == 429 and r.json() == {"error": "slow down"}
    assert r.headers["retry-after"] == "2"


async def test_hang_never_answers_and_is_recorded_as_disconnect(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"hang": True})
    with pytest.raises(httpx.ReadTimeout):
        # Only the read may time out: a connect on a busy machine can take longer.
        async with httpx.AsyncClient(timeout=httpx.Timeout(0.3, connect=10.0)) as c:
            await c.post(f"{emulator.base_url()}/chat/completions",
                         json={"model": model, "messages": MSG})
    rec = await wait_for_record(emulator, model, lambda r: r["disconnected"])
    assert rec["disconnected_at"] is not None and rec["status"] is None


async def test_hang_mid_stream(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "一二三四五", "hang": 3})
    got: list[str] = []
    with pytest.raises(httpx.ReadTimeout):
        async with httpx.AsyncClient(timeout=httpx.Timeout(1.0, connect=10.0)) as c, c.stream(
            "POST", f"{emulator.base_url()}/chat/completions",
            json={"model": model, "messages": MSG, "stream": True}) as r:
            async for line in r.aiter_lines():
                if line.startswith("data:"):
                    got.append(line)
    assert len(got) == 3
    rec = await wait_for_record(emulator, model, lambda r: r["disconnected"])
    assert rec["chunks_sent"] == 3


async def test_disconnect_after_drops_the_connection(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "一二三四五六", "disconnect_after": 4})
    got: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        async with httpx.AsyncClient(timeout=5) as c, c.stream(
            "POST", f"{emulator.base_url()}/chat/completions",
            json={"model": model, "messages": MSG, "stream": True}) as r:
            async for line in r.aiter_lines():
                if line.startswith("data:"):
                    got.append(line)
    assert len(got) == 4
    rec = await wait_for_record(emulator, model, lambda r: r["finished_at"] is not None)
    assert rec["server_closed"] is True and rec["disconnected"] is False


async def test_malformed_chunk(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "一二三", "malformed_after": 2})
    lines = await stream_lines(emulator, "vllm", {"model": model, "messages": MSG})
    data = [x for x in lines if x.startswith("data: {")]
    with pytest.raises(json.JSONDecodeError):
        json.loads(data[2][6:])
    assert lines[-1] == "data: [DONE]"  # the stream carries on after the bad line


async def test_keepalive_trickle_while_stalled(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "好", "ttft_ms": 450, "keepalive_ms": 100})
    lines = await stream_lines(emulator, "openrouter", {"model": model, "messages": MSG})
    first_data = next(i for i, x in enumerate(lines) if x.startswith("data:"))
    assert lines[:first_data] == [": keep-alive"] * 4


async def test_non_streaming_faults_drop_and_malformed_body(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"disconnect_after": 0}, times=1)
    await emulator.script(model, {"malformed_after": 0}, times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        await post(emulator, "vllm", {"model": model, "messages": MSG})
    r = await post(emulator, "vllm", {"model": model, "messages": MSG})
    assert r.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        r.json()


async def test_openai_stream_options_need_stream(emulator):
    r = await post(emulator, "openai", {"model": "gpt-4o", "messages": MSG,
                                        "stream_options": {"include_usage": True}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "stream_options"


async def test_no_choices_and_usage_override(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"no_choices": True, "usage": {"prompt_tokens": 1,
                                                                "completion_tokens": 0,
                                                                "total_tokens": 1}})
    body = (await post(emulator, "vllm", {"model": model, "messages": MSG})).json()
    assert body["choices"] == [] and body["usage"]["total_tokens"] == 1
    objs = chunks(await stream_lines(emulator, "vllm", {"model": model, "messages": MSG}))
    assert all(o["choices"] == [] for o in objs)


# --- recording & control API --------------------------------------------------------------


async def wait_for_record(emulator: EmulatorHandle, model: str, cond: Any) -> dict[str, Any]:
    for _ in range(100):
        recs = await emulator.requests(model)
        if recs and cond(recs[-1]):
            return recs[-1]
        await asyncio.sleep(0.02)
    raise AssertionError(f"condition never met: {recs}")


async def test_client_disconnect_mid_stream_is_recorded(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "一二三四五六七八九十", "token_delay_ms": 50})
    async with httpx.AsyncClient(timeout=5) as c, c.stream(
        "POST", f"{emulator.base_url()}/chat/completions",
        json={"model": model, "messages": MSG, "stream": True}) as r:
        n = 0
        async for line in r.aiter_lines():
            n += line.startswith("data:")
            if n == 3:
                break  # barge-in: the client closes the response here
    rec = await wait_for_record(emulator, model, lambda r: r["disconnected"])
    assert rec["disconnected_at"] >= rec["received_at"]
    assert 3 <= rec["chunks_sent"] < 13


async def test_requests_record_body_and_only_presence_of_authorization(emulator):
    model = emulator.unique_model()
    await post(emulator, "kimi", {"model": model, "messages": MSG, "max_tokens": 7})
    rec = (await emulator.requests(model))[0]
    assert rec["body"]["max_tokens"] == 7 and rec["persona"] == "kimi"
    assert rec["authorization_present"] is True
    assert "sk-secret" not in json.dumps(rec)


async def test_script_times_persona_match_and_typo_rejected(emulator):
    model = emulator.unique_model()
    await emulator.script(model, {"content": "第一次"}, times=1)
    await emulator.script(model, {"content": "只给deepseek"}, persona="deepseek")
    assert message(await post(emulator, "vllm", {"model": model, "messages": MSG}))[
        "content"] == "第一次"
    assert message(await post(emulator, "vllm", {"model": model, "messages": MSG}))[
        "content"] == DEFAULT_ANSWER
    assert message(await post(emulator, "deepseek", {"model": model, "messages": MSG}))[
        "content"] == "只给deepseek"
    with pytest.raises(httpx.HTTPStatusError):
        emulator.script_sync(model, {"contnet": "typo"})
    assert len(emulator.requests_sync(model)) == 3
