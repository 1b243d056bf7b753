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

The vendor's own finish reason stays on the diagnostic, which words those cases its own way
(`diagnostics.text_key`).
"""

from __future__ import annotations

from typing import Any

from callout_server.llm.diagnostics import (
    CONTEXT_EXCEEDED,
    FILTERED,
    UPSTREAM_FAILED,
    Diagnostic,
    Locale,
)
from callout_server.llm.events import Usage

LENGTH = "length"

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
        return Diagnostic.make("upstream_error", locale, **numbers)
    if finish_reason == LENGTH:
        if answered:
            return Diagnostic.make("truncated", locale, **numbers)
        if reasoning_signal(reasoning_seen, usage, thinking):
            return Diagnostic.make("truncated_by_reasoning", locale, **numbers)
        return Diagnostic.make("truncated", locale, **numbers)
    if finish_reason in CONTEXT_EXCEEDED:
        return Diagnostic.make("truncated", locale, **numbers)
    if finish_reason in FILTERED:
        if answered:
            return Diagnostic.make("truncated", locale, **numbers)
        return Diagnostic.make("empty_output", locale, **numbers)
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
