"""Why a model call produced no usable answer (or only part of one): a pure function.

    classify(text=…, reasoning_seen=…, tool_calls=…, finish_reason=…, usage=…, max_tokens=…)
        -> Diagnostic | None

Rules (seed 003 §3, spec/vendors.md):
- empty content with no tool call is never an answer, whatever the finish reason;
- `length` with no answer: `truncated_by_reasoning` when any reasoning signal was seen
  (reasoning text in any field, inline <think>, or usage.reasoning_tokens > 0), else `truncated`;
- `length` with an answer: `truncated` (a partial answer; NLU treats it as a failure, chat may
  already have spoken it);
- `model_context_window_exceeded` (Zhipu): `truncated`, advice to shorten the prompt;
- `content_filter` / `sensitive`: `empty_output` when nothing came back, `truncated` when the
  filter cut an answer short; the vendor value stays in `finish_reason`;
- `insufficient_system_resource` (DeepSeek), `load` (Ollama), `network_error` (Zhipu): the
  vendor failed in-band: `upstream_error`;
- any other finish reason (or none) with no answer: `empty_output` — typically the vLLM
  reasoning-parser mix-up (whole answer in the reasoning field, finish `stop`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from callout_server.llm.diagnostics import Diagnostic, Locale
from callout_server.llm.events import Usage

LENGTH = "length"
CONTEXT_EXCEEDED = frozenset({"model_context_window_exceeded"})
FILTERED = frozenset({"content_filter", "sensitive"})
UPSTREAM_FAILED = frozenset({"insufficient_system_resource", "load", "network_error"})

# (zh message, zh advice, en message, en advice) for cases the shared table words differently.
_VARIANTS: dict[str, tuple[str, str, str, str]] = {
    "context": (
        "输入超出模型上下文窗口，输出被截断 (finish_reason={finish_reason})",
        "缩短提示词或对话历史，或换用上下文更长的模型",
        "The input exceeded the model's context window and the output was cut "
        "(finish_reason={finish_reason})",
        "Shorten the prompt or the history, or use a model with a longer context",
    ),
    "filtered_empty": (
        "模型输出被厂商内容审核拦截，返回内容为空 (finish_reason={finish_reason})",
        "检查提示词与对话内容是否触发厂商审核；必要时联系厂商",
        "The vendor's content filter blocked the output; nothing came back "
        "(finish_reason={finish_reason})",
        "Check whether the prompt or conversation trips the vendor's filter; ask the vendor if needed",
    ),
    "filtered_partial": (
        "模型输出被厂商内容审核中断，内容不完整 (finish_reason={finish_reason})",
        "检查提示词与对话内容是否触发厂商审核",
        "The vendor's content filter cut the output short (finish_reason={finish_reason})",
        "Check whether the prompt or conversation trips the vendor's filter",
    ),
    "upstream_failed": (
        "推理服务未完成生成：资源不足或服务异常 (finish_reason={finish_reason})",
        "稍后重试；持续出现时检查推理服务负载或联系厂商",
        "The inference server gave up generating: overloaded or failing "
        "(finish_reason={finish_reason})",
        "Retry shortly; if it persists, check the server's load or contact the vendor",
    ),
}


def has_answer(text: str, tool_calls: int) -> bool:
    return tool_calls > 0 or bool(text.strip())


def reasoning_signal(reasoning_seen: bool, usage: Usage | None, thinking: bool | None = None) -> bool:
    """Any evidence that the model reasoned: reasoning text, reasoning tokens in usage, or our
    own request switching thinking on (vLLM-style servers report no reasoning tokens, and a
    budget spent with no answer while thinking was asked for went to the reasoning)."""
    return (reasoning_seen or thinking is True
            or bool(usage is not None and (usage.reasoning_tokens or 0) > 0))


def classify(
    *,
    text: str,
    reasoning_seen: bool,
    tool_calls: int = 0,
    finish_reason: str | None,
    usage: Usage | None = None,
    max_tokens: int | None = None,
    thinking: bool | None = None,
    locale: Locale = "zh",
) -> Diagnostic | None:
    """The diagnostic for one finished call, or None when it answered cleanly.

    `reasoning_seen`: reasoning text arrived in any field or inline (whitespace-only blocks,
    such as the empty `<think>\\n\\n</think>` of a suppressed model, do not count — the caller
    passes `bool(reasoning.strip())`). `thinking`: the switch our request sent (True = on).
    """
    answered = has_answer(text, tool_calls)
    numbers: dict[str, Any] = {
        "finish_reason": finish_reason,
        "max_tokens": max_tokens,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "reasoning_tokens": usage.reasoning_tokens if usage else None,
    }
    if finish_reason in UPSTREAM_FAILED:
        return _variant("upstream_error", "upstream_failed", locale, numbers)
    if finish_reason == LENGTH:
        if answered:
            return Diagnostic.make("truncated", locale, **numbers)
        if reasoning_signal(reasoning_seen, usage, thinking):
            return Diagnostic.make("truncated_by_reasoning", locale, **numbers)
        return Diagnostic.make("truncated", locale, **numbers)
    if finish_reason in CONTEXT_EXCEEDED:
        return _variant("truncated", "context", locale, numbers)
    if finish_reason in FILTERED:
        if answered:
            return _variant("truncated", "filtered_partial", locale, numbers)
        return _variant("empty_output", "filtered_empty", locale, numbers)
    if not answered:
        return Diagnostic.make("empty_output", locale, **numbers)
    return None


def usable(diagnostic: Diagnostic | None, *, text: str, tool_calls: int) -> bool:
    """Whether a call with this diagnostic still delivers an answer to its caller.

    Only a `truncated` result that has text (or a tool call) is usable, with its diagnostic
    attached; every other diagnostic means no answer.
    """
    if diagnostic is None:
        return True
    return diagnostic.code == "truncated" and has_answer(text, tool_calls)


def _variant(code: str, key: str, locale: Locale, numbers: dict[str, Any]) -> Diagnostic:
    zh_msg, zh_adv, en_msg, en_adv = _VARIANTS[key]
    msg, adv = (en_msg, en_adv) if locale == "en" else (zh_msg, zh_adv)
    base = Diagnostic.make(
        code, locale, detail=f"finish_reason={numbers['finish_reason']}", **numbers
    )
    return replace(base, message=msg.format(finish_reason=numbers["finish_reason"]), advice=adv)
