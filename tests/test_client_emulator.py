"""LLMClient against the real vendor emulator process: both API styles, personas, faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from callout_server.llm import (
    Finish,
    LLMCallError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    ReasoningDelta,
    TextDelta,
    ToolCall,
)

KEY = "sk-emu-0123456789abcdef0123"
# Thinking off unless the configuration says otherwise, as the chat tier asks; VENDOR_DEFAULT
# leaves it to the vendor, as the script tier does.
REQ = LLMRequest(messages=[{"role": "user", "content": "您好"}], default_thinking=False)
VENDOR_DEFAULT = LLMRequest(messages=REQ.messages)


@pytest.fixture(scope="module")
async def client() -> Any:
    c = LLMClient(locale="en")
    yield c
    await c.aclose()


def cfg(emulator: Any, persona: str, model: str, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {
        "tier": "t",
        "name": "emu",
        "base_url": emulator.base_url(persona),
        "model": model,
        "api_key": KEY,
        "timeout_s": 10.0,
        "vendor": persona if persona != "vllm-noparser" else "vllm",
    }
    return LLMConfig(**{**base, **kw})


async def drain(stream: Any) -> list[Any]:
    async with stream as s:
        return [event async for event in s]


@pytest.mark.parametrize("style", ["chat-completions", "responses"])
async def test_complete_and_stream_both_styles(
    emulator: Any, client: LLMClient, style: str
) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "您好，请问有什么可以帮您？"})
    c = cfg(emulator, "vllm", model, api_style=style)
    done = await client.complete(c, REQ)
    assert done.text == "您好，请问有什么可以帮您？" and done.finish_reason == "stop"
    assert done.usage.completion_tokens and done.diagnostic is None
    events = await drain(client.stream(c, REQ))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.text
    assert isinstance(events[-1], Finish) and events[-1].diagnostic is None
    assert sum(isinstance(e, Finish) for e in events) == 1
    recorded = await emulator.requests(model)
    assert [r["stream"] for r in recorded] == [False, True]
    assert all(r["authorization_present"] for r in recorded)
    assert KEY not in str(recorded)


@pytest.mark.parametrize(
    ("persona", "family"),
    [
        ("vllm", "qwen3-8b"),
        ("deepseek", "deepseek-v4-flash"),
        ("dashscope", "qwen3-32b"),
        ("zai", "glm-4.6"),
        ("ollama", "qwen3:8b"),
        ("openrouter", "qwen/qwen3-32b"),
    ],
)
async def test_thinking_suppressed_per_persona(
    emulator: Any, client: LLMClient, persona: str, family: str
) -> None:
    model = emulator.unique_model(family)
    await emulator.script(model, {"content": "好的", "reasoning": "先想一想……"})
    done = await client.complete(cfg(emulator, persona, model), REQ)  # the chat default: off
    assert done.thinking is False
    assert done.text == "好的" and done.reasoning == ""


async def test_thinking_allowed_returns_reasoning_separately(
    emulator: Any, client: LLMClient
) -> None:
    model = emulator.unique_model("deepseek-v4-flash")
    await emulator.script(model, {"content": "好的", "reasoning": "先想一想"})
    c = cfg(emulator, "deepseek", model, enable_thinking=True, max_tokens=3000)
    events = await drain(client.stream(c, VENDOR_DEFAULT))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "先想一想"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "好的"


async def test_inline_think_without_parser(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "好的", "reasoning": "嗯……"})
    c = cfg(emulator, "vllm-noparser", model, max_tokens=3000)
    done = await client.complete(c, VENDOR_DEFAULT)
    assert done.text == "好的" and "嗯" in done.reasoning
    events = await drain(client.stream(c, VENDOR_DEFAULT))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "好的"


@pytest.mark.parametrize("style", ["chat-completions", "responses"])
async def test_reasoning_eats_max_tokens(emulator: Any, client: LLMClient, style: str) -> None:
    # Script tier leaves thinking to the vendor: Qwen3 thinks by default and spends the budget.
    model = emulator.unique_model("qwen3-8b")
    c = cfg(emulator, "vllm", model, max_tokens=100, api_style=style)
    with pytest.raises(LLMCallError) as info:
        await client.complete(c, VENDOR_DEFAULT)
    d = info.value.diagnostic
    assert (d.code, d.finish_reason, d.max_tokens) == ("truncated_by_reasoning", "length", 100)
    events = await drain(client.stream(c, VENDOR_DEFAULT))
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "length"
    assert finish.diagnostic is not None and finish.diagnostic.code == "truncated_by_reasoning"


async def test_tool_calls_stream(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(
        model,
        {
            "content": "",
            "tool_calls": [
                {"name": "transfer", "arguments": {"dept": "售后", "reason": "客户要求转人工服务"}}
            ],
        },
    )
    events = await drain(client.stream(cfg(emulator, "vllm", model), REQ))
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    assert call.name == "transfer" and call.arguments == {
        "dept": "售后",
        "reason": "客户要求转人工服务",
    }
    assert isinstance(events[-1], Finish) and events[-1].diagnostic is None


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (503, True), (400, False)])
async def test_http_errors(emulator: Any, client: LLMClient, status: int, retryable: bool) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"status": status})
    for call in (
        client.complete(cfg(emulator, "openai", model), REQ),
        drain(client.stream(cfg(emulator, "openai", model), REQ)),
    ):
        with pytest.raises(LLMCallError) as info:
            await call
        assert info.value.diagnostic.status == status and info.value.retryable is retryable
        assert info.value.diagnostic.detail and KEY not in str(info.value)


async def test_hang_times_out(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"hang": True})
    c = cfg(emulator, "vllm", model, timeout_s=0.3)
    with pytest.raises(LLMCallError) as info:
        await client.complete(c, REQ)
    assert info.value.code == "timeout"
    with pytest.raises(LLMCallError) as info:
        await drain(client.stream(c, REQ))
    assert info.value.code == "timeout"


async def test_stall_with_keepalives_is_detected(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "您好您好", "hang": 3, "keepalive_ms": 50})
    s = client.stream(cfg(emulator, "vllm", model), REQ, read_timeout_s=0.4)
    seen: list[Any] = []
    with pytest.raises(LLMCallError) as info:
        async with s:
            async for event in s:
                seen.append(event)
    assert info.value.code == "timeout" and "stalled" in (info.value.diagnostic.detail_in("en") or "")
    assert any(isinstance(e, TextDelta) for e in seen) and s.keepalives >= 3


async def test_ttft_timeout(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "好", "ttft_ms": 1500})
    with pytest.raises(LLMCallError) as info:
        await drain(client.stream(cfg(emulator, "vllm", model), REQ, ttft_timeout_s=0.2))
    assert info.value.code == "timeout" and "first token" in (info.value.diagnostic.detail_in("en") or "")


async def test_ttft_measured(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "好的", "ttft_ms": 150})
    s = client.stream(cfg(emulator, "vllm", model), REQ)
    await drain(s)
    assert s.ttft_ms is not None and 140 <= s.ttft_ms < 1000
    assert s.latency_ms is not None and s.latency_ms >= s.ttft_ms


async def test_disconnect_mid_stream(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "您好您好您好", "disconnect_after": 3})
    with pytest.raises(LLMCallError) as info:
        await drain(client.stream(cfg(emulator, "vllm", model), REQ))
    assert info.value.code == "upstream_error"


async def test_malformed_chunk(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "您好您好", "malformed_after": 2})
    with pytest.raises(LLMCallError) as info:
        await drain(client.stream(cfg(emulator, "vllm", model), REQ))
    assert info.value.code == "upstream_error" and "malformed" in info.value.diagnostic.message_in("en")
    await emulator.script(model, {"content": "您好", "malformed_after": 0})
    with pytest.raises(LLMCallError) as info:
        await client.complete(cfg(emulator, "vllm", model), REQ)
    assert info.value.code == "upstream_error"


async def test_no_choices(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"no_choices": True})
    with pytest.raises(LLMCallError) as info:
        await client.complete(cfg(emulator, "vllm", model), REQ)
    assert info.value.code == "empty_output"


async def test_closing_stream_disconnects_upstream(emulator: Any, client: LLMClient) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "您好" * 50, "token_delay_ms": 50})
    async with client.stream(cfg(emulator, "vllm", model), REQ) as s:
        async for event in s:
            if isinstance(event, TextDelta):
                break  # barge-in
    assert s.diagnostic is not None and s.diagnostic.code == "cancelled"
    for _ in range(50):
        (record,) = await emulator.requests(model)
        if record["disconnected"]:
            break
        await asyncio.sleep(0.05)
    assert record["disconnected"] and record["chunks_sent"] < 20


async def test_connect_error(client: LLMClient) -> None:
    c = LLMConfig(tier="t", name="x", base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY)
    with pytest.raises(LLMCallError) as info:
        await drain(client.stream(c, REQ))
    assert info.value.code == "connect_error" and KEY not in str(info.value)
