"""Model families: whether a model reasons at all, and how its own template switches it.

The model name decides the family (first matching row wins, searched case-insensitively
anywhere in the name, so a test's unique name such as ``qwen3-8b-3f9a1c`` still lands in
the Qwen3 family). Which *request key* reaches the template is the persona's business
(see ``personas.py``); the family only says what the model does with the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Mode = Literal["never", "always", "hybrid"]

_OPENAI_EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    pattern: str
    mode: Mode
    #: Hybrid models only: thinking state when the request says nothing.
    default_on: bool = False
    #: ``chat_template_kwargs`` key the chat template reads (self-hosted servers): DeepSeek-V3.x
    #: reads ``thinking``, so ``enable_thinking`` there is a silent no-op (vLLM, SGLang docs).
    template_key: str = "enable_thinking"
    #: OpenAI ``reasoning_effort`` values the model accepts; empty = parameter not supported.
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    #: R1 / Thinking-2507 templates put ``<think>`` into the prompt: raw output has only
    #: ``</think>`` (vllm #22507, SGLang docs).
    open_tag_in_output: bool = True
    #: DashScope: open-source qwen3-* refuse non-streaming calls unless thinking is off.
    stream_only_thinking: bool = False
    #: Set for the fallback row only: an unknown name reasons only when a script says so.
    unknown: bool = False


# Order matters: specific rows before the general ones they overlap with.
FAMILIES: tuple[Family, ...] = (
    # --- OpenAI (learn.microsoft.com reasoning effort table; spec row "OpenAI official").
    Family("gpt-5-pro", r"gpt-5(\.\d+)?-pro", "always", efforts=("high",), default_effort="high"),
    Family(
        "gpt-5.1+", r"gpt-5\.\d", "hybrid", default_on=False,
        efforts=("none", "low", "medium", "high", "xhigh"), default_effort="none",
    ),
    Family("gpt-5-chat", r"gpt-5-chat", "never"),
    Family(
        "gpt-5", r"gpt-5", "always",
        efforts=("minimal", "low", "medium", "high"), default_effort="medium",
    ),
    Family("o-series", r"(^|/)o[134](-|$)", "always", efforts=_OPENAI_EFFORTS,
           default_effort="medium"),
    Family("gpt-oss", r"gpt-oss", "always", efforts=_OPENAI_EFFORTS, default_effort="medium"),
    Family("gpt-4/3.5", r"gpt-(4|3\.5)", "never"),
    # --- DeepSeek (api-docs.deepseek.com thinking_mode; legacy aliases map onto V4-Flash).
    Family("deepseek-reasoner", r"deepseek-reasoner", "always"),
    Family("deepseek-chat", r"deepseek-chat", "never"),
    Family("deepseek-r1", r"deepseek-r1", "always", open_tag_in_output=False),
    Family("deepseek-v4", r"deepseek-(v4|flash|pro)", "hybrid", default_on=True),
    Family("deepseek-v3.x", r"deepseek-v3\.[12]", "hybrid", default_on=False,
           template_key="thinking"),
    Family("deepseek-v3", r"deepseek-v3", "never"),
    # --- Qwen (DashScope deep-thinking doc; Qwen3 model cards).
    Family("qwen-thinking-2507", r"qwen3.*thinking", "always", open_tag_in_output=False),
    Family("qwen-instruct-2507", r"qwen3.*instruct-2507", "never"),
    Family("qwq", r"qwq", "always"),
    Family("qwen3.5+", r"qwen3\.[5-9]", "hybrid", default_on=True),
    Family("qwen3", r"qwen3", "hybrid", default_on=True, stream_only_thinking=True),
    Family("qwen-commercial", r"qwen-(plus|flash|turbo)", "hybrid", default_on=False),
    Family("qwen-legacy", r"qwen", "never"),
    # --- GLM (docs.z.ai thinking-mode: default enabled for 4.5+).
    Family("glm-z1", r"glm-z1", "always"),
    Family("glm-4.5+", r"glm-(4\.[5-9]|[5-9])", "hybrid", default_on=True),
    Family("glm-legacy", r"glm", "never"),
    # --- Kimi (platform.kimi.ai models overview).
    Family("kimi-thinking", r"kimi-(k2-thinking|k3|k2\.7)", "always"),
    Family("kimi-k2.5+", r"kimi-k2\.[5-9]", "hybrid", default_on=True),
    Family("kimi-legacy", r"kimi|moonshot", "never"),
    # --- Doubao on Ark: defaults differ per model; seed models think by default.
    Family("doubao-seed", r"doubao-seed|^ep-", "hybrid", default_on=True),
    Family("doubao-legacy", r"doubao", "never"),
)

UNKNOWN = Family("unknown", r"", "never", unknown=True)

@lru_cache(maxsize=8192)
def family_of(model: str) -> Family:
    """Return the family of ``model``; :data:`UNKNOWN` when no row matches."""
    # Cached per name, so the row scan runs once per distinct model, not per request.
    for fam in FAMILIES:
        if re.search(fam.pattern, model, re.IGNORECASE):
            return fam
    return UNKNOWN


#: An unknown model that a script gives reasoning behaves as a default-on hybrid model.
SCRIPTED = Family("scripted", "", "hybrid", default_on=True)
