"""Dialect registry and resolution: host detection, explicit vendor, model families."""

from __future__ import annotations

import dataclasses

import pytest

from callout_server.llm.config import LLMConfig
from callout_server.llm.dialects import (
    DIALECTS,
    Dialect,
    detect_dialect,
    resolve_dialect,
)
from callout_server.llm.model_names import openai_model, template_key

BRIEF_NAMES = {
    "openai", "azure", "deepseek", "dashscope", "siliconflow", "zai", "kimi", "ark",
    "openrouter", "gemini", "anthropic", "ollama", "huggingface", "vllm", "sglang",
    "gpustack", "llamacpp",
}  # fmt: skip


def _cfg(base_url: str, *, vendor: str | None = None, model: str = "m") -> LLMConfig:
    return LLMConfig(tier="nlu", name="t", base_url=base_url, model=model, vendor=vendor)


def test_registry_names_cover_the_brief_plus_fallback() -> None:
    assert set(DIALECTS) == BRIEF_NAMES | {"selfhosted"}
    assert all(DIALECTS[name].name == name for name in DIALECTS)


def test_dialect_rows_are_frozen_and_hashable() -> None:
    row = DIALECTS["deepseek"]
    assert isinstance(row, Dialect)
    hash(row)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        DIALECTS["new"] = row  # type: ignore[index]


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://api.openai.com/v1", "openai"),
        ("https://api.openai.com/v1/", "openai"),
        ("HTTPS://API.OPENAI.COM/v1/", "openai"),
        ("api.openai.com/v1", "openai"),  # no scheme
        ("https://my-res.openai.azure.com/openai/v1/", "azure"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://API.DeepSeek.com/v1/", "deepseek"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "dashscope"),
        ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1/", "dashscope"),
        ("https://api.siliconflow.cn/v1", "siliconflow"),
        ("https://api.siliconflow.com/v1", "siliconflow"),
        ("https://api.z.ai/api/paas/v4", "zai"),
        ("https://open.bigmodel.cn/api/paas/v4/", "zai"),
        ("https://api.moonshot.ai/v1", "kimi"),
        ("https://api.moonshot.cn/v1", "kimi"),
        ("https://api.kimi.com/coding/v1", "kimi"),
        ("https://ark.cn-beijing.volces.com/api/v3", "ark"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "gemini"),
        ("https://api.anthropic.com/v1/", "anthropic"),
        ("http://localhost:11434/v1", "ollama"),
        ("http://10.1.2.3:11434/v1/", "ollama"),
        ("http://ollama.internal:8080/v1", "ollama"),
        ("https://router.huggingface.co/v1", "huggingface"),
        ("http://gpustack.internal/v1", "gpustack"),
        ("http://10.0.0.7/gpustack/v1-openai", "gpustack"),
        ("http://10.0.0.7:8000/v1", "selfhosted"),
        ("http://localhost:8080", "selfhosted"),
        # Look-alikes must not match: patterns are whole-host, not substrings.
        ("https://api.openai.com.evil.example/v1", "selfhosted"),
        ("https://notapi.deepseek.com/v1", "selfhosted"),
        ("http://host:notaport/v1", "selfhosted"),
    ],
)
def test_host_detection(base_url: str, expected: str) -> None:
    assert detect_dialect(base_url).name == expected
    assert resolve_dialect(_cfg(base_url)).name == expected


@pytest.mark.parametrize(
    ("vendor", "base_url", "expected"),
    [
        ("vllm", "https://api.openai.com/v1", "vllm"),
        ("deepseek", "http://10.0.0.7:8000/v1", "deepseek"),
        (" DashScope ", "http://proxy.internal/v1", "dashscope"),
        ("openai", "http://gpustack.internal/v1", "openai"),
        ("sglang", "http://localhost:11434/v1", "sglang"),
    ],
)
def test_explicit_vendor_beats_detection(vendor: str, base_url: str, expected: str) -> None:
    assert resolve_dialect(_cfg(base_url, vendor=vendor)).name == expected


def test_unknown_or_blank_vendor_falls_back_to_detection() -> None:
    assert resolve_dialect(_cfg("https://api.deepseek.com", vendor="nope")).name == "deepseek"
    assert resolve_dialect(_cfg("https://api.deepseek.com", vendor="")).name == "deepseek"


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("Qwen3-8B", "enable_thinking"),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "enable_thinking"),
        ("qwen3.5-2b", "enable_thinking"),
        ("GLM-4.5", "enable_thinking"),
        ("zai-org/GLM-4.6-FP8", "enable_thinking"),
        ("DeepSeek-V3.1", "thinking"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "thinking"),
        ("DeepSeek-V3.2", "thinking"),
        ("deepseek-v3.2-exp", "thinking"),
        ("ibm-granite/granite-3.2-8b-instruct", "thinking"),
        ("deepseek-v3-0324", "enable_thinking"),  # plain V3: no thinking template
        ("my-finetune", "enable_thinking"),  # unknown names: Qwen-style default
        ("", "enable_thinking"),
    ],
)
def test_self_hosted_model_family(model: str, key: str) -> None:
    assert template_key(model) == key


@pytest.mark.parametrize(
    ("model", "reasoning", "efforts"),
    [
        ("gpt-4o", False, ()),
        ("gpt-4.1-mini", False, ()),
        ("gpt-5", True, ("minimal", "low", "medium", "high")),
        ("gpt-5-mini-2025-08-07", True, ("minimal", "low", "medium", "high")),
        ("GPT-5-nano", True, ("minimal", "low", "medium", "high")),
        ("openai/gpt-5", True, ("minimal", "low", "medium", "high")),
        ("gpt-5.1", True, ("none", "low", "medium", "high")),
        ("gpt-5.2-2025-12-11", True, ("none", "low", "medium", "high")),
        ("gpt-5.1-codex-max", True, ("none", "low", "medium", "high", "xhigh")),
        ("gpt-5-pro", True, ("high",)),
        ("gpt-5-chat-latest", False, ()),
        ("o1", True, ("low", "medium", "high")),
        ("o3-mini", True, ("low", "medium", "high")),
        ("o4-mini", True, ("low", "medium", "high")),
        ("o1-mini", True, ()),
    ],
)
def test_openai_model_table(model: str, reasoning: bool, efforts: tuple[str, ...]) -> None:
    row = openai_model(model)
    assert (row.reasoning, row.efforts) == (reasoning, efforts)


def test_budget_key_and_reasoning_fields_are_data() -> None:
    assert DIALECTS["openai"].budget_key == "max_completion_tokens"
    assert DIALECTS["azure"].budget_key == "max_completion_tokens"
    others = {d.budget_key for n, d in DIALECTS.items() if n not in {"openai", "azure"}}
    assert others == {"max_tokens"}
    assert DIALECTS["deepseek"].reasoning_fields == ("reasoning_content",)
    assert DIALECTS["vllm"].reasoning_fields == ("reasoning", "reasoning_content")
    assert DIALECTS["ollama"].reasoning_fields == ("reasoning",)
    assert DIALECTS["openai"].reasoning_fields == ()
    assert DIALECTS["vllm"].inline_think and not DIALECTS["deepseek"].inline_think
