"""What a model's name says about it, whichever vendor serves it: the chat-template key
that switches a self-hosted family's thinking, whether its template pre-opens `<think>`, and
OpenAI's reasoning models with the efforts each accepts. Pure and cached: read on the hot path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class ModelFamily:
    """Self-hosted model family: which chat-template kwarg switches its thinking."""

    name: str
    pattern: str  # regex searched in the lower-cased model name
    template_key: str


# First match wins; no match → "enable_thinking" (Qwen3 / GLM convention, the common case).
MODEL_FAMILIES: tuple[ModelFamily, ...] = (
    # DeepSeek-V3.1/V3.2 templates read `thinking` (SGLang: "NOTE: not enable_thinking").
    ModelFamily("deepseek-v3.x", r"deepseek[-_ ]?v3[._-]?[12](?!\d)", "thinking"),
    ModelFamily("granite", r"granite", "thinking"),  # vLLM reasoning_outputs doc
    ModelFamily("qwen3", r"qwen3", "enable_thinking"),
    ModelFamily("glm", r"glm-?[45]", "enable_thinking"),
)
DEFAULT_TEMPLATE_KEY = "enable_thinking"


@lru_cache(maxsize=512)  # pure and on the hot path: a config has few distinct values
def template_key(model: str) -> str:
    """The `chat_template_kwargs` key that switches thinking for a self-hosted model."""
    name = model.lower()
    for family in MODEL_FAMILIES:
        if re.search(family.pattern, name):
            return family.template_key
    return DEFAULT_TEMPLATE_KEY


# Families whose chat template already opened `<think>` in the prompt, so raw output carries
# only the closing tag (vendors.md, "Inline reasoning leaks"). Read only for a dialect whose
# answers may carry inline reasoning (`Dialect.inline_think`): a hosted API returns their
# reasoning in its own field.
PREOPENED_THINK = re.compile(r"deepseek-r1|thinking-2507|qwq|r1-distill", re.IGNORECASE)


@lru_cache(maxsize=512)  # pure and on the hot path: a config has few distinct values
def preopens_think(model: str) -> bool:
    return PREOPENED_THINK.search(model) is not None


@dataclass(frozen=True, slots=True)
class OpenAIModel:
    """An OpenAI model family: is it a reasoning model, and which efforts it accepts."""

    pattern: str  # regex full-matched against the lower-cased model name
    reasoning: bool
    efforts: tuple[str, ...] = ()  # accepted values, lowest first


# First match wins; unmatched names (gpt-4o, gpt-4.1, Azure deployment aliases) are treated
# as non-reasoning: reasoning_effort on them is a 400.
OPENAI_MODELS: tuple[OpenAIModel, ...] = (
    OpenAIModel(r"gpt-5(\.\d+)?-chat.*", reasoning=False),  # the non-reasoning ChatGPT model
    OpenAIModel(r"gpt-5(\.\d+)?-pro.*", reasoning=True, efforts=("high",)),
    OpenAIModel(
        r"gpt-5\.1-codex-max.*", reasoning=True, efforts=("none", "low", "medium", "high", "xhigh")
    ),
    # gpt-5.1+: default none; "minimal" is a 400.
    OpenAIModel(r"gpt-5\.\d+.*", reasoning=True, efforts=("none", "low", "medium", "high")),
    OpenAIModel(r"gpt-5.*", reasoning=True, efforts=("minimal", "low", "medium", "high")),
    OpenAIModel(r"o1-(mini|preview).*", reasoning=True),  # predate reasoning_effort
    OpenAIModel(r"o\d.*", reasoning=True, efforts=("low", "medium", "high")),
)
_NOT_REASONING = OpenAIModel(r".*", reasoning=False)


@lru_cache(maxsize=512)  # pure and on the hot path: a config has few distinct values
def openai_model(model: str) -> OpenAIModel:
    # Gateways spell models "openai/gpt-5"; the family is the last path segment.
    name = model.lower().rsplit("/", 1)[-1].strip()
    for row in OPENAI_MODELS:
        if re.fullmatch(row.pattern, name):
            return row
    return _NOT_REASONING
