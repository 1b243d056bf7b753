"""Request bodies per vendor and API style: thinking switches, effort, budget, extra_params."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from callout_server.llm.config import LLMConfig
from callout_server.llm.messages import chat_tools, responses_input, responses_tools
from callout_server.llm.request import LLMRequest
from callout_server.llm.request_body import BuiltRequest, build_request

KEY = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
TOOL = {
    "type": "function",
    "name": "hang_up",
    "description": "End the call",
    "parameters": {"type": "object", "properties": {}},
}


def cfg(base_url: str = "http://10.0.0.7:8000/v1", model: str = "Qwen3-8B", **kw: Any) -> LLMConfig:
    kw.setdefault("tier", "t")  # a label only: the client knows no tier
    return LLMConfig(name="t", base_url=base_url, model=model, api_key=KEY, **kw)


def req(**kw: Any) -> LLMRequest:
    return LLMRequest(messages=copy.deepcopy(MESSAGES), **kw)


def core(model: str, budget_key: str = "max_tokens", **extra: Any) -> dict[str, Any]:
    """The streaming Chat Completions body every vendor gets before thinking keys."""
    return {
        "model": model,
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        budget_key: 300,
        **extra,
    }


OFF_TYPE = {"thinking": {"type": "disabled"}}
ON_TYPE = {"thinking": {"type": "enabled"}}

# (dialect, base_url, model, keys when off, keys when on, reported off, reported on)
VENDORS = [
    ("deepseek", "https://api.deepseek.com", "deepseek-v4-flash", OFF_TYPE, ON_TYPE, False, True),
    (
        "dashscope",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen-plus",
        {"enable_thinking": False},
        {"enable_thinking": True},
        False,
        True,
    ),
    (
        "siliconflow",
        "https://api.siliconflow.cn/v1",
        "Qwen/Qwen3-8B",
        {"enable_thinking": False},
        {"enable_thinking": True},
        False,
        True,
    ),
    ("zai", "https://api.z.ai/api/paas/v4", "glm-4.6", OFF_TYPE, ON_TYPE, False, True),
    ("zai", "https://open.bigmodel.cn/api/paas/v4/", "glm-4.5", OFF_TYPE, ON_TYPE, False, True),
    ("kimi", "https://api.moonshot.ai/v1", "kimi-k2.5", OFF_TYPE, ON_TYPE, False, True),
    ("kimi", "https://api.kimi.com/coding/v1", "kimi-k2.6", OFF_TYPE, ON_TYPE, False, True),
    ("ark", "https://ark.cn-beijing.volces.com/api/v3", "ep-2025", OFF_TYPE, ON_TYPE, False, True),
    (
        "openrouter",
        "https://openrouter.ai/api/v1",
        "qwen/qwen3-32b",
        {"reasoning": {"effort": "none"}},
        {"reasoning": {"enabled": True}},
        False,
        True,
    ),
    (
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "gemini-2.5-flash",
        {"reasoning_effort": "none"},
        {},
        False,
        True,
    ),
    ("anthropic", "https://api.anthropic.com/v1/", "claude-sonnet-4-5", {}, {}, False, None),
    (
        "ollama",
        "http://localhost:11434/v1",
        "qwen3:8b",
        {"reasoning_effort": "none"},
        {},
        False,
        True,
    ),
    ("huggingface", "https://router.huggingface.co/v1", "zai-org/GLM-4.6", {}, {}, None, None),
    (
        "gpustack",
        "http://gpustack.internal/v1",
        "qwen3.5-2b",
        {"chat_template_kwargs": {"enable_thinking": False}},
        {"chat_template_kwargs": {"enable_thinking": True}},
        False,
        True,
    ),
    (
        "selfhosted",
        "http://10.0.0.7:8000/v1",
        "deepseek-ai/DeepSeek-V3.2",
        {"chat_template_kwargs": {"thinking": False}},
        {"chat_template_kwargs": {"thinking": True}},
        False,
        True,
    ),
    (
        "selfhosted",
        "http://10.0.0.7:8000/v1",
        "GLM-4.5-Air",
        {"chat_template_kwargs": {"enable_thinking": False}},
        {"chat_template_kwargs": {"enable_thinking": True}},
        False,
        True,
    ),
]
OPENAI_ROWS = [
    ("openai", "https://api.openai.com/v1/", "gpt-4o", {}, {}, False, None),
    ("openai", "https://api.openai.com/v1", "gpt-5", {"reasoning_effort": "minimal"}, {}, False, True),
    ("azure", "https://r.openai.azure.com/openai/v1", "o3", {"reasoning_effort": "low"}, {}, False, True),
    ("openai", "https://api.openai.com/v1", "gpt-5.1", {"reasoning_effort": "none"}, {}, False, True),
]  # fmt: skip


def _expected(name: str, model: str, keys: dict[str, Any]) -> dict[str, Any]:
    budget_key = "max_completion_tokens" if name in {"openai", "azure"} else "max_tokens"
    return core(model, budget_key, **keys)


@pytest.mark.parametrize(
    ("name", "url", "model", "off", "on", "r_off", "r_on"), VENDORS + OPENAI_ROWS
)
def test_vendor_body_exact(
    name: str, url: str, model: str, off: dict, on: dict, r_off: bool | None, r_on: bool | None
) -> None:
    cases = [
        # (caller's default, cfg.enable_thinking, req.enable_thinking, expected keys, reported)
        (False, None, None, off, r_off),  # the NLU/chat default: off where a customer waits
        (None, None, None, {}, None),  # the script default: the vendor's, nothing sent
        (None, False, None, off, r_off),
        (False, True, None, on, r_on),  # the configuration beats the caller's default
        (False, True, False, off, r_off),  # the call's value beats the configuration's
        (None, False, True, on, r_on),
    ]
    for default, cfg_thinking, req_thinking, keys, reported in cases:
        built = build_request(
            cfg(url, model, enable_thinking=cfg_thinking),
            req(enable_thinking=req_thinking, default_thinking=default),
            stream=True,
        )
        case = (default, cfg_thinking, req_thinking)
        assert built.dialect == name
        assert built.body == _expected(name, model, keys), case
        assert built.thinking is reported, case
        assert built.max_tokens == 300


def test_dashscope_non_streaming_vendor_default_is_sent_as_off() -> None:
    # Open-source qwen3-* on DashScope answer 400 to non-streaming calls unless it is false.
    c = cfg("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3-32b", tier="script")
    built = build_request(c, req(), stream=False)
    assert built.body == {
        "model": "qwen3-32b",
        "messages": MESSAGES,
        "stream": False,
        "max_tokens": 300,
        "enable_thinking": False,
    }
    assert built.thinking is False and built.notes
    assert "enable_thinking" not in build_request(c, req(), stream=True).body


# --- OpenAI ---------------------------------------------------------------------------------

VENDOR_KEYS = {
    "chat_template_kwargs": {"enable_thinking": False},
    "enable_thinking": False,
    "thinking": {"type": "disabled"},
    "reasoning": {"effort": "none"},
    "thinking_budget": 0,
    "include_reasoning": False,
}
OPENAI_ALLOWED = {
    "model", "messages", "stream", "stream_options", "max_completion_tokens", "temperature",
    "tools", "response_format", "reasoning_effort",
}  # fmt: skip


@pytest.mark.parametrize(
    "base_url", ["https://api.openai.com/v1", "https://x.openai.azure.com/openai/v1"]
)
@pytest.mark.parametrize("model", ["gpt-4o", "gpt-5", "gpt-5.1", "o3", "gpt-5-pro"])
@pytest.mark.parametrize("thinking", [False, True, None])
def test_openai_never_gets_vendor_keys(base_url: str, model: str, thinking: bool | None) -> None:
    c = cfg(base_url, model, enable_thinking=thinking, temperature=0.3, extra_params=VENDOR_KEYS)
    built = build_request(c, req(tools=[TOOL], json_mode=True), stream=True)
    assert set(built.body) <= OPENAI_ALLOWED
    assert "max_tokens" not in built.body
    assert built.body["max_completion_tokens"] == 300
    if model != "gpt-4o":
        assert "temperature" not in built.body  # reasoning models reject non-default values
    else:
        assert built.body["temperature"] == 0.3
        assert "reasoning_effort" not in built.body


@pytest.mark.parametrize(
    ("model", "thinking", "effort", "sent"),
    [
        ("gpt-5", True, "low", "low"),
        ("gpt-5", None, "high", "high"),
        ("gpt-5", True, "none", None),  # gpt-5 has no "none"
        ("gpt-5", False, "high", "minimal"),  # off wins over effort
        ("gpt-5.1", False, None, "none"),
        ("gpt-5.1", True, "minimal", None),  # 400 on gpt-5.1
        ("gpt-5.1", True, "xhigh", None),
        ("gpt-5.1-codex-max", True, "xhigh", "xhigh"),
        ("gpt-5-pro", False, None, None),  # high only: cannot be reduced
        ("gpt-5-pro", True, "high", "high"),
        ("o3", False, None, "low"),
        ("o4-mini", True, "medium", "medium"),
        ("o4-mini", True, "minimal", None),
        ("gpt-4o", True, "high", None),  # not a reasoning model: 400 if sent
        ("gpt-4.1", False, "low", None),
    ],
)
def test_openai_reasoning_effort(model: str, thinking: bool | None, effort: str, sent: str) -> None:
    c = cfg("https://api.openai.com/v1", model, tier="script", enable_thinking=thinking)
    built = build_request(c, req(reasoning_effort=effort), stream=False)
    assert built.body.get("reasoning_effort") == sent
    if effort is not None and sent != effort:
        assert any("reasoning_effort" in note for note in built.notes)


def test_gpt5_pro_off_reports_vendor_default() -> None:
    built = build_request(cfg("https://api.openai.com/v1", "gpt-5-pro"),
                          req(default_thinking=False), stream=False)
    assert built.thinking is None and "reasoning_effort" not in built.body and built.notes


# --- reasoning_effort on other dialects --------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "model", "thinking", "effort", "expected"),
    [
        # DeepSeek: effort only in thinking mode.
        ("https://api.deepseek.com", "deepseek-v4-pro", True, "high", {"reasoning_effort": "high"}),
        ("https://api.deepseek.com", "deepseek-v4-pro", None, "max", {"reasoning_effort": "max"}),
        ("https://api.deepseek.com", "deepseek-v4-pro", False, "high", {}),
        ("https://api.deepseek.com", "deepseek-v4-pro", True, "none", {}),
        # Ollama: high/medium/low/none only.
        ("http://localhost:11434/v1", "qwen3", True, "low", {"reasoning_effort": "low"}),
        ("http://localhost:11434/v1", "qwen3", True, "minimal", {}),
        ("http://localhost:11434/v1", "qwen3", False, "high", {"reasoning_effort": "none"}),
        # OpenRouter: effort inside `reasoning`, merged with the on switch.
        (
            "https://openrouter.ai/api/v1",
            "x/y",
            True,
            "high",
            {"reasoning": {"enabled": True, "effort": "high"}},
        ),
        ("https://openrouter.ai/api/v1", "x/y", None, "low", {"reasoning": {"effort": "low"}}),
        # Gemini compat rejected "minimal".
        ("https://generativelanguage.googleapis.com/v1beta/openai", "g", True, "minimal", {}),
        (
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "g",
            True,
            "low",
            {"reasoning_effort": "low"},
        ),
        # Anthropic ignores it: not sent.
        ("https://api.anthropic.com/v1", "claude", True, "high", {}),
        # Self-hosted and Hugging Face: passed through as configured.
        ("http://10.0.0.7:8000/v1", "Qwen3-8B", None, "xhigh", {"reasoning_effort": "xhigh"}),
        ("https://router.huggingface.co/v1", "m", None, "low", {"reasoning_effort": "low"}),
    ],
)
def test_effort_per_dialect(
    url: str, model: str, thinking: bool | None, effort: str, expected: dict
) -> None:
    c = cfg(url, model, tier="script", enable_thinking=thinking)
    body = build_request(c, req(), stream=False).body
    body_cfg_effort = build_request(
        dataclasses.replace(c, reasoning_effort=effort.upper()), req(), stream=False
    ).body
    built = build_request(c, req(reasoning_effort=effort), stream=False)
    assert built.body == {**body, **expected}
    assert body_cfg_effort == built.body  # cfg value, case-normalised, behaves the same
    if not expected.get("reasoning_effort") and not expected.get("reasoning", {}).get("effort"):
        assert built.notes


def test_request_effort_beats_configured_effort() -> None:
    c = cfg("https://api.deepseek.com", "deepseek-v4-pro", tier="script", reasoning_effort="low")
    assert (
        build_request(c, req(reasoning_effort="high"), stream=False).body["reasoning_effort"]
        == "high"
    )
    assert build_request(c, req(), stream=False).body["reasoning_effort"] == "low"


# --- extra_params --------------------------------------------------------------------------


def test_extra_params_apply_last_and_merge_chat_template_kwargs() -> None:
    c = cfg(
        extra_params={
            "chat_template_kwargs": {"custom": 1, "enable_thinking": True},
            "top_k": 20,
            "repetition_penalty": 1.05,
        }
    )
    r = req(extra_params={"chat_template_kwargs": {"other": 2}, "top_k": 40})
    built = build_request(c, r, stream=False)
    assert built.body["chat_template_kwargs"] == {"enable_thinking": True, "custom": 1, "other": 2}
    assert built.body["top_k"] == 40  # req after cfg
    assert built.body["repetition_penalty"] == 1.05


def test_extra_params_override_vendor_switch_last_writer_wins() -> None:
    c = cfg(
        "https://api.deepseek.com",
        "deepseek-v4-flash",
        extra_params={"thinking": {"type": "enabled"}},
    )
    body = build_request(c, req(), stream=False).body
    assert body["thinking"] == {"type": "enabled"}


def test_extra_params_override_budget_is_reported() -> None:
    built = build_request(cfg(extra_params={"max_tokens": 512}), req(max_tokens=100), stream=False)
    assert built.body["max_tokens"] == 512 and built.max_tokens == 512


@pytest.mark.parametrize("style", ["chat-completions", "responses"])
def test_protected_keys_are_never_overridden(style: str) -> None:
    protected = {"model": "evil", "messages": [], "input": [], "stream": True}
    c = cfg(api_style=style, extra_params=protected)
    built = build_request(c, req(extra_params=protected), stream=False)
    assert built.body["model"] == "Qwen3-8B"
    assert built.body["stream"] is False
    if style == "responses":
        assert "messages" not in built.body and built.body["input"]
    else:
        assert "input" not in built.body and built.body["messages"] == MESSAGES
    assert len(built.notes) == 8


def test_deepseek_gets_no_chat_template_kwargs() -> None:
    c = cfg(
        "https://api.deepseek.com",
        "deepseek-v4-flash",
        extra_params={"chat_template_kwargs": {"a": 1}},
    )
    built = build_request(c, req(), stream=False)
    assert "chat_template_kwargs" not in built.body and built.notes


def test_body_never_aliases_configuration() -> None:
    c = cfg(extra_params={"chat_template_kwargs": {"a": 1}, "stop": ["x"]})
    built = build_request(c, req(), stream=False)
    built.body["chat_template_kwargs"]["a"] = 2
    built.body["stop"].append("y")
    assert c.extra_params == {"chat_template_kwargs": {"a": 1}, "stop": ["x"]}


# --- core fields ----------------------------------------------------------------------------


def test_budget_and_temperature_precedence() -> None:
    c = cfg(max_tokens=300, temperature=0.7)
    built = build_request(c, req(max_tokens=64, temperature=0.0), stream=False)
    assert built.body["max_tokens"] == 64 and built.max_tokens == 64
    assert built.body["temperature"] == 0.0  # an explicit 0 is kept
    assert "temperature" not in build_request(cfg(), req(), stream=False).body


def test_non_streaming_has_no_stream_options() -> None:
    body = build_request(cfg(), req(), stream=False).body
    assert body["stream"] is False and "stream_options" not in body


@pytest.mark.parametrize(
    ("base_url", "style", "url"),
    [
        ("http://h:8000/v1", "chat-completions", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1/", "chat-completions", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1/", "responses", "http://h:8000/v1/responses"),
        ("http://h/v1/chat/completions", "chat-completions", "http://h/v1/chat/completions"),
        (
            "https://r.openai.azure.com/openai/v1/?api-version=preview",
            "responses",
            "https://r.openai.azure.com/openai/v1/responses?api-version=preview",
        ),
    ],
)
def test_url(base_url: str, style: str, url: str) -> None:
    assert build_request(cfg(base_url, api_style=style), req(), stream=False).url == url


def test_chat_tools_and_json_mode() -> None:
    nested = {"type": "function", "function": {"name": "x", "parameters": {}}}
    built = build_request(cfg(), req(tools=[TOOL, nested], json_mode=True), stream=False)
    assert built.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "hang_up",
                "description": "End the call",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        nested,
    ]
    assert built.body["response_format"] == {"type": "json_object"}
    assert chat_tools([{"type": "web_search"}]) == [{"type": "web_search"}]


def test_key_never_in_body_or_repr_and_public_fields() -> None:
    built = build_request(cfg(extra_params={"x": 1}), req(tools=[TOOL]), stream=True)
    assert KEY not in json.dumps(built.body) and KEY not in repr(built)
    names = [f.name for f in dataclasses.fields(BuiltRequest)]
    assert names[:5] == ["url", "body", "dialect", "thinking", "max_tokens"]


def test_unknown_vendor_is_noted() -> None:
    built = build_request(cfg("https://api.deepseek.com", vendor="deepsea"), req(), stream=False)
    assert built.dialect == "deepseek" and any("deepsea" in n for n in built.notes)


def test_inputs_are_not_mutated() -> None:
    r = req(tools=[copy.deepcopy(TOOL)])
    before = copy.deepcopy((r.messages, r.tools))
    for style in ("chat-completions", "responses"):
        build_request(cfg(api_style=style), r, stream=True)
    assert (r.messages, r.tools) == before


# --- Responses API --------------------------------------------------------------------------


def test_responses_body_openai_reasoning_model() -> None:
    c = cfg("https://api.openai.com/v1", "gpt-5", api_style="responses", temperature=0.2)
    built = build_request(
        c, req(tools=[TOOL], json_mode=True, max_tokens=200, default_thinking=False), stream=True)
    assert built.url == "https://api.openai.com/v1/responses"
    assert built.body == {
        "model": "gpt-5",
        "input": [{"type": "message", "role": "user", "content": "Hi"}],
        "stream": True,
        "instructions": "Be brief.",
        "max_output_tokens": 200,
        "tools": [TOOL],
        "text": {"format": {"type": "json_object"}},
        "reasoning": {"effort": "minimal"},
    }
    assert built.thinking is False and built.max_tokens == 200


def test_responses_openai_allows_reasoning_extra_but_not_vendor_keys() -> None:
    c = cfg("https://api.openai.com/v1", "gpt-5.1", api_style="responses", extra_params=VENDOR_KEYS)
    body = build_request(c, req(), stream=False).body
    assert body["reasoning"] == {"effort": "none"}
    assert not {"chat_template_kwargs", "enable_thinking", "thinking"} & set(body)


@pytest.mark.parametrize(
    ("url", "model", "keys"),
    [
        (
            "http://10.0.0.7:8000/v1",
            "Qwen3-8B",
            {"chat_template_kwargs": {"enable_thinking": False}},
        ),
        ("http://localhost:11434/v1", "qwen3", {"reasoning": {"effort": "none"}}),
        ("https://api.deepseek.com", "deepseek-v4-flash", {"thinking": {"type": "disabled"}}),
        (
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            {"enable_thinking": False},
        ),
    ],
)
def test_responses_vendor_switches(url: str, model: str, keys: dict) -> None:
    built = build_request(
        cfg(url, model, api_style="responses", temperature=0.1), req(default_thinking=False),
        stream=False,
    )
    assert built.body == {
        "model": model,
        "input": [{"type": "message", "role": "user", "content": "Hi"}],
        "stream": False,
        "instructions": "Be brief.",
        "max_output_tokens": 300,
        "temperature": 0.1,
        **keys,
    }


def test_responses_input_conversion() -> None:
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "system", "content": "Speak Chinese."},
        {"role": "user", "content": [{"type": "text", "text": "Call me back"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "hidden",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "schedule", "arguments": '{"when": "tomorrow"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "note", "arguments": {"a": 1}},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "done"}]},
        {
            "role": "assistant",
            "content": "Will do.",
            "tool_calls": [{"id": "call_3", "function": {"name": "hang_up", "arguments": ""}}],
        },
        {"role": "system", "content": "Wrap up."},
        {"role": "assistant", "content": [{"type": "text", "text": "Bye"}]},
    ]
    instructions, items = responses_input(messages)
    assert instructions == "You are an agent.\n\nSpeak Chinese."
    assert items == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Call me back"}]},
        {"type": "function_call", "call_id": "call_1", "name": "schedule",
         "arguments": '{"when": "tomorrow"}'},
        {"type": "function_call", "call_id": "call_2", "name": "note", "arguments": '{"a": 1}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
        {"type": "function_call_output", "call_id": "call_2", "output": "done"},
        {"type": "message", "role": "assistant", "content": "Will do."},
        {"type": "function_call", "call_id": "call_3", "name": "hang_up", "arguments": ""},
        {"type": "message", "role": "system", "content": "Wrap up."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Bye"}]},
    ]  # fmt: skip


def test_responses_input_without_system_and_tools_flattening() -> None:
    instructions, items = responses_input([{"role": "user", "content": "x"}])
    assert instructions is None and items == [{"type": "message", "role": "user", "content": "x"}]
    nested = {"type": "function", "function": {"name": "n", "parameters": {}}}
    assert responses_tools([TOOL, nested]) == [
        TOOL,
        {"type": "function", "name": "n", "parameters": {}},
    ]
