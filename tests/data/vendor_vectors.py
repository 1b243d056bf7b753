"""Test vectors for every vendor dialect row: what we send, and how we read what comes back.

One `Vector` per row of `callout_server.llm.dialects` (tests/test_vendor_rows.py fails when a
row has none): a base URL the row is recognised from (any URL for a row chosen only by
name), a model, the thinking keys of a streamed Chat Completions body with thinking off and
on, and a non-streamed reply in the vendor's documented shape (/work/shared/spec/vendors.md)
with the answer and chain-of-thought we must read out of it. Adding a vendor is its row plus
its vector here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OFF_TYPE = {"thinking": {"type": "disabled"}}
ON_TYPE = {"thinking": {"type": "enabled"}}
TEMPLATE_OFF = {"chat_template_kwargs": {"enable_thinking": False}}
TEMPLATE_ON = {"chat_template_kwargs": {"enable_thinking": True}}
SELF_HOSTED_URL = "http://10.0.0.7:8000/v1"

ANSWER, COT = "好的，明天下午三点。", "用户给出了时间。"
FIELD_CONTENT = {"content": ANSWER, "reasoning_content": COT}  # DeepSeek, DashScope, SGLang...
FIELD_REASONING = {"content": ANSWER, "reasoning": COT}  # vLLM (PR #27752), OpenRouter, Ollama
INLINE = {"content": f"<think>{COT}</think>\n\n{ANSWER}"}  # no reasoning parser; GLM-Z1
HIDDEN = {"content": ANSWER}  # OpenAI, Gemini, Anthropic: reasoning is never returned


@dataclass(frozen=True, slots=True)
class Vector:
    base_url: str
    model: str
    off: dict[str, Any]  # thinking keys in the body when the call says off
    on: dict[str, Any]  # ... and when it says on
    reply: dict[str, Any]  # a non-streamed `choices[0].message`
    reasoning: str  # what must be read as chain-of-thought from `reply` ("" = none)
    detected: bool = True  # the row is recognised from `base_url` alone
    budget_key: str = "max_tokens"
    extra: dict[str, Any] = field(default_factory=dict)  # other body keys the row adds


VECTORS: dict[str, Vector] = {
    "openai": Vector("https://api.openai.com/v1", "gpt-5.1", {"reasoning_effort": "none"}, {},
                     HIDDEN, "", budget_key="max_completion_tokens"),
    "azure": Vector("https://res.openai.azure.com/openai/v1", "o4-mini",
                    {"reasoning_effort": "low"}, {}, HIDDEN, "",
                    budget_key="max_completion_tokens"),
    "deepseek": Vector("https://api.deepseek.com", "deepseek-v4-flash", OFF_TYPE, ON_TYPE,
                       FIELD_CONTENT, COT),
    "dashscope": Vector("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus",
                        {"enable_thinking": False}, {"enable_thinking": True},
                        FIELD_CONTENT, COT),
    "siliconflow": Vector("https://api.siliconflow.cn/v1", "Qwen/Qwen3-8B",
                          {"enable_thinking": False}, {"enable_thinking": True},
                          FIELD_CONTENT, COT),
    "zai": Vector("https://open.bigmodel.cn/api/paas/v4", "glm-z1-air", OFF_TYPE, ON_TYPE,
                  INLINE, COT),  # GLM-Z1 puts <think> inside content
    "kimi": Vector("https://api.moonshot.cn/v1", "kimi-k2.5", OFF_TYPE, ON_TYPE,
                   FIELD_CONTENT, COT),
    "ark": Vector("https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6", OFF_TYPE,
                  ON_TYPE, FIELD_CONTENT, COT),
    "openrouter": Vector("https://openrouter.ai/api/v1", "qwen/qwen3-32b",
                         {"reasoning": {"effort": "none"}}, {"reasoning": {"enabled": True}},
                         {**FIELD_REASONING,
                          "reasoning_details": [{"type": "reasoning.text", "text": COT}]}, COT),
    "gemini": Vector("https://generativelanguage.googleapis.com/v1beta/openai/",
                     "gemini-2.5-flash", {"reasoning_effort": "none"}, {}, HIDDEN, ""),
    "anthropic": Vector("https://api.anthropic.com/v1/", "claude-sonnet-4-5", {}, {},
                        HIDDEN, ""),
    "huggingface": Vector("https://router.huggingface.co/v1", "zai-org/GLM-4.6", {}, {},
                          INLINE, COT),  # provider-dependent: either shape may come
    "ollama": Vector("http://localhost:11434/v1", "qwen3:8b", {"reasoning_effort": "none"}, {},
                     FIELD_REASONING, COT),
    "gpustack": Vector("http://gpustack.internal/v1", "qwen3.5-2b", TEMPLATE_OFF, TEMPLATE_ON,
                       FIELD_REASONING, COT),
    "vllm": Vector(SELF_HOSTED_URL, "Qwen/Qwen3-8B", TEMPLATE_OFF, TEMPLATE_ON,
                   FIELD_REASONING, COT, detected=False),
    "sglang": Vector(SELF_HOSTED_URL, "deepseek-ai/DeepSeek-V3.2",
                     {"chat_template_kwargs": {"thinking": False}},
                     {"chat_template_kwargs": {"thinking": True}},
                     FIELD_CONTENT, COT, detected=False),
    "llamacpp": Vector("http://10.0.0.9:8080/v1", "Qwen3-8B-GGUF", TEMPLATE_OFF, TEMPLATE_ON,
                       FIELD_CONTENT, COT, detected=False),
    "selfhosted": Vector(SELF_HOSTED_URL, "GLM-4.5-Air", TEMPLATE_OFF, TEMPLATE_ON,
                         INLINE, COT),
}
