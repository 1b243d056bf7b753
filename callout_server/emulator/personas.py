"""Personas: one data row per emulated vendor/server, looked up by URL path prefix.

A persona says which request key switches thinking (a reader from ``rules.py``), where the
reasoning comes back, which budget keys count reasoning, how errors look, and which tiny
validator runs. Adding a vendor is a row here, not a branch in the request path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from callout_server.emulator import rules
from callout_server.emulator.errors import STYLES, ErrorStyle

#: ``reasoning_content`` / ``reasoning``: a message/delta field; ``hidden``: never returned
#: (tokens only); ``inline``: ``<think>…</think>`` inside ``content`` (no reasoning parser).
ReasoningAt = Literal["reasoning_content", "reasoning", "hidden", "inline"]


@dataclass(frozen=True, slots=True)
class Persona:
    name: str
    switch: rules.SwitchReader
    reasoning_at: ReasoningAt
    error_style: ErrorStyle
    #: Chat Completions output budget keys and whether each one counts reasoning tokens.
    budget_keys: tuple[tuple[str, bool], ...] = (("max_tokens", True),)
    #: Key bounding the reasoning alone; past it the model stops thinking and answers.
    thinking_budget_key: str | None = None
    #: ``message.content`` when the budget ran out before any answer text.
    empty_on_length: str | None = ""
    #: ``message.content`` of a tool-call-only answer.
    empty_with_tools: str | None = None
    #: Whether usage carries ``completion_tokens_details.reasoning_tokens``.
    reports_reasoning_tokens: bool = False
    #: Extra choice field: OpenRouter ``native_finish_reason``, vLLM ``stop_reason``.
    finish_extra: str | None = None
    supports_responses: bool = False
    #: Responses API: reasoning as ``summary`` (OpenAI, only when asked) or ``reasoning_text``.
    responses_reasoning: Literal["summary", "text"] = "text"
    validate: rules.Validator | None = None
    hides: Callable[[dict[str, Any]], bool] | None = None


_VLLM = Persona(
    name="vllm",
    switch=rules.template_kwargs,
    reasoning_at="reasoning",  # renamed from reasoning_content (vLLM PR #27752 / #33402)
    error_style=STYLES["vllm"],
    budget_keys=(("max_completion_tokens", True), ("max_tokens", True)),
    empty_on_length=None,
    finish_extra="stop_reason",
    supports_responses=True,
    hides=rules.vllm_hides,
)

PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona(
            name="openai",
            switch=rules.openai_effort,
            reasoning_at="hidden",
            error_style=STYLES["openai"],
            budget_keys=(("max_completion_tokens", True), ("max_tokens", True)),
            reports_reasoning_tokens=True,
            supports_responses=True,
            responses_reasoning="summary",
            validate=rules.openai_rules,
        ),
        Persona(
            name="deepseek",
            switch=rules.thinking_type,
            reasoning_at="reasoning_content",
            error_style=STYLES["deepseek"],
            empty_on_length=None,  # LiteLLM notes content:null on runaway reasoning
            reports_reasoning_tokens=True,
        ),
        Persona(
            name="dashscope",
            switch=rules.enable_thinking,
            reasoning_at="reasoning_content",
            error_style=STYLES["dashscope"],
            thinking_budget_key="thinking_budget",
            reports_reasoning_tokens=True,
            validate=rules.dashscope_rules,
        ),
        Persona(
            name="siliconflow",
            switch=rules.enable_thinking,
            reasoning_at="reasoning_content",
            error_style=STYLES["siliconflow"],
            # SiliconFlow guide: max_tokens excludes CoT; thinking_budget bounds the CoT.
            budget_keys=(("max_tokens", False),),
            thinking_budget_key="thinking_budget",
            empty_on_length=None,
            reports_reasoning_tokens=True,
        ),
        Persona(
            name="openrouter",
            switch=rules.openrouter_reasoning,
            reasoning_at="reasoning",
            error_style=STYLES["openrouter"],
            budget_keys=(("max_tokens", True), ("max_completion_tokens", True)),
            reports_reasoning_tokens=True,
            finish_extra="native_finish_reason",
            supports_responses=True,
            validate=rules.openrouter_rules,
            hides=rules.openrouter_hides,
        ),
        Persona(
            name="ollama",
            switch=rules.ollama_effort,
            reasoning_at="reasoning",
            error_style=STYLES["ollama"],
            budget_keys=(("max_tokens", True),),  # /v1 has no max_completion_tokens field
            empty_with_tools="",  # Go string: never null
            supports_responses=True,
        ),
        Persona(
            name="zai",
            switch=rules.thinking_type,
            reasoning_at="reasoning_content",
            error_style=STYLES["zai"],
        ),
        Persona(
            name="kimi",
            switch=rules.thinking_type,
            reasoning_at="reasoning_content",
            error_style=STYLES["kimi"],
        ),
        Persona(
            name="ark",
            switch=rules.thinking_type,
            reasoning_at="reasoning_content",
            error_style=STYLES["ark"],
            # Ark API reference: max_completion_tokens includes CoT, max_tokens is the answer.
            budget_keys=(("max_completion_tokens", True), ("max_tokens", False)),
            reports_reasoning_tokens=True,
            supports_responses=True,
            validate=rules.ark_rules,
        ),
        _VLLM,
        dataclasses.replace(_VLLM, name="vllm-noparser", reasoning_at="inline"),
        dataclasses.replace(_VLLM, name="gpustack"),
        Persona(
            name="sglang",
            switch=rules.template_kwargs,
            reasoning_at="reasoning_content",
            error_style=STYLES["sglang"],
            budget_keys=(("max_completion_tokens", True), ("max_tokens", True)),
            empty_on_length=None,  # sglang#25536: content null after runaway reasoning
            supports_responses=True,
        ),
        Persona(
            name="llamacpp",
            switch=rules.template_kwargs,
            reasoning_at="reasoning_content",
            error_style=STYLES["llamacpp"],
            budget_keys=(("max_tokens", True), ("n_predict", True)),
            supports_responses=True,
        ),
    )
}

DEFAULT_PERSONA = "vllm"
