"""Truncation / empty-output diagnosis from real response shapes (pure, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from callout_server.llm.adapters import ChatCompletionsAdapter
from callout_server.llm.classify import classify, usable
from callout_server.llm.diagnostics import Diagnostic
from callout_server.llm.events import ReasoningDelta, TextDelta, ToolCall, Usage


def diagnose(body: dict[str, Any], max_tokens: int = 300, locale: str = "zh") -> Diagnostic | None:
    """Run a real Chat Completions body through the adapter, then classify it."""
    adapter = ChatCompletionsAdapter()
    events = adapter.parse(body)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    tools = sum(isinstance(e, ToolCall) for e in events)
    return classify(
        text=text,
        reasoning_seen=bool(reasoning.strip()),
        tool_calls=tools,
        finish_reason=adapter.finish_reason,
        usage=adapter.usage,
        max_tokens=max_tokens,
        locale=locale,  # type: ignore[arg-type]
    )


def body(content: Any, finish: str | None, usage: dict[str, Any] | None = None, **msg: Any) -> dict:
    out: dict[str, Any] = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **msg},
                "finish_reason": finish,
            }
        ]
    }
    if usage is not None:
        out["usage"] = usage
    return out


QWEN_RUNAWAY = body(
    None,
    "length",
    {
        "prompt_tokens": 80,
        "completion_tokens": 300,
        "completion_tokens_details": {"reasoning_tokens": 300},
    },
    reasoning_content="好的，用户说明天下午三点以后都可以……",
)


def test_reasoning_ate_the_budget() -> None:
    d = diagnose(QWEN_RUNAWAY)
    assert d is not None and d.code == "truncated_by_reasoning"
    assert (d.max_tokens, d.reasoning_tokens, d.prompt_tokens, d.completion_tokens) == (
        300,
        300,
        80,
        300,
    )
    assert d.finish_reason == "length"
    assert "300" in d.message and "思考" in d.message and "关闭思考模式" in d.advice
    assert not usable(d, text="", tool_calls=0)


def test_reasoning_signal_from_usage_only() -> None:
    # OpenAI: no reasoning text in Chat Completions, only usage.reasoning_tokens.
    d = diagnose(
        body(
            "",
            "length",
            {
                "prompt_tokens": 9,
                "completion_tokens": 300,
                "completion_tokens_details": {"reasoning_tokens": 300},
            },
        )
    )
    assert d is not None and d.code == "truncated_by_reasoning"


def test_reasoning_signal_from_inline_think() -> None:
    d = diagnose(body("<think>\n嗯，用户", "length"))
    assert d is not None and d.code == "truncated_by_reasoning"


def test_empty_think_block_is_not_a_reasoning_signal() -> None:
    d = diagnose(body("<think>\n\n</think>\n\n", "length"))
    assert d is not None and d.code == "truncated"


def test_length_without_reasoning_and_no_text() -> None:
    d = diagnose(body("", "length", {"prompt_tokens": 5, "completion_tokens": 300}))
    assert d is not None and d.code == "truncated" and d.reasoning_tokens is None


def test_partial_answer_cut_by_length_is_truncated_but_usable() -> None:
    d = diagnose(
        body(
            '{"intent": "agr',
            "length",
            {
                "prompt_tokens": 5,
                "completion_tokens": 300,
                "completion_tokens_details": {"reasoning_tokens": 250},
            },
        )
    )
    assert d is not None and d.code == "truncated"
    assert usable(d, text='{"intent": "agr', tool_calls=0)


def test_vllm_parser_mixup_is_empty_output_not_budget() -> None:
    # Wrong --reasoning-parser: the answer lands in `reasoning`, content null, finish stop.
    d = diagnose(body(None, "stop", reasoning='{"intent": "agree"}'), locale="en")
    assert d is not None and d.code == "empty_output"
    assert "reasoning-parser" in d.advice and "not a budget problem" in d.advice
    assert d.finish_reason == "stop"


def test_whitespace_only_content_is_not_an_answer() -> None:
    d = diagnose(body("  \n ", "stop"))
    assert d is not None and d.code == "empty_output"


@pytest.mark.parametrize("reason", ["content_filter", "sensitive"])
def test_filtered(reason: str) -> None:
    d = diagnose(body("", reason))
    assert d is not None and d.code == "empty_output" and d.finish_reason == reason
    assert "审核" in d.message
    partial = diagnose(body("您好，关于", reason))
    assert partial is not None and partial.code == "truncated" and partial.finish_reason == reason


@pytest.mark.parametrize("reason", ["insufficient_system_resource", "load", "network_error"])
def test_vendor_gave_up_in_band(reason: str) -> None:
    d = diagnose(body("部分", reason))
    assert d is not None and d.code == "upstream_error" and d.finish_reason == reason
    assert not usable(d, text="部分", tool_calls=0)


def test_context_window_exceeded() -> None:
    d = diagnose(body("", "model_context_window_exceeded"), locale="en")
    assert d is not None and d.code == "truncated" and "Shorten the prompt" in d.advice


def test_tool_call_is_an_answer() -> None:
    d = diagnose(
        body(
            None,
            "tool_calls",
            tool_calls=[
                {"id": "1", "type": "function", "function": {"name": "hangup", "arguments": "{}"}}
            ],
        )
    )
    assert d is None


def test_no_finish_reason_is_judged_by_content() -> None:
    assert diagnose(body("好的", None)) is None
    d = diagnose(body("", None))
    assert d is not None and d.code == "empty_output"


def test_clean_answer() -> None:
    assert diagnose(body('{"intent": "agree"}', "stop")) is None
    assert (
        classify(
            text="x", reasoning_seen=True, finish_reason="stop", usage=Usage(1, 2, 3), max_tokens=10
        )
        is None
    )


def test_budget_spent_with_thinking_switched_on_is_blamed_on_reasoning() -> None:
    # vLLM-style servers report no reasoning_tokens: our own "thinking on" is the evidence.
    d = classify(text="", reasoning_seen=False, finish_reason="length", max_tokens=32,
                 thinking=True)
    assert d is not None and d.code == "truncated_by_reasoning"
    assert "max_tokens" in d.advice or "思考" in d.advice
    off = classify(text="", reasoning_seen=False, finish_reason="length", thinking=False)
    assert off is not None and off.code == "truncated"
