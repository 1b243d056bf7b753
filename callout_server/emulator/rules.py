"""Tiny per-vendor behaviour functions that data rows alone cannot express.

Two kinds, referenced from the persona rows in ``personas.py``:

* **switch readers** ``(body, family, api) -> bool | None`` read the request key this vendor
  honours for thinking (``None`` = request is silent). Keys other vendors use are *not* read:
  that is exactly the silent no-op real servers exhibit (e.g. DashScope ignores
  ``chat_template_kwargs``, vLLM ignores top-level ``enable_thinking``).
* **validators** ``(view) -> None`` raise :class:`VendorError` where the vendor answers 400.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from callout_server.emulator.errors import VendorError
from callout_server.emulator.families import Family

Api = Literal["chat", "responses"]
Body = dict[str, Any]
SwitchReader = Callable[[Body, Family, Api], "bool | None"]


@dataclass(frozen=True, slots=True)
class RequestView:
    """What a validator may look at: the body and the thinking decision already made."""

    body: Body
    family: Family
    api: Api
    stream: bool
    requested: bool | None
    thinking: bool


Validator = Callable[[RequestView], None]


# --- switch readers -----------------------------------------------------------------------


def thinking_type(body: Body, fam: Family, api: Api) -> bool | None:
    """DeepSeek, Z.AI, Kimi, Ark: top-level ``thinking: {"type": "enabled"|"disabled"}``."""
    t = body.get("thinking")
    if isinstance(t, dict):
        kind = t.get("type")
        if kind == "disabled":
            return False
        if kind == "enabled":
            return True
    return None  # Ark's "auto" lets the model decide: same as silence here.


def enable_thinking(body: Body, fam: Family, api: Api) -> bool | None:
    """DashScope, SiliconFlow: top-level boolean ``enable_thinking``."""
    v = body.get("enable_thinking")
    return v if isinstance(v, bool) else None


def openrouter_reasoning(body: Body, fam: Family, api: Api) -> bool | None:
    """OpenRouter: ``reasoning: {"effort": "none"}`` or ``{"enabled": false}``."""
    r = body.get("reasoning")
    if not isinstance(r, dict):
        return None
    if r.get("enabled") is False or r.get("effort") == "none":
        return False
    if r.get("enabled") is True or r.get("effort") or r.get("max_tokens"):
        return True
    return None


_OLLAMA_EFFORTS = ("high", "medium", "low", "none")


def ollama_effort(body: Body, fam: Family, api: Api) -> bool | None:
    """Ollama /v1: ``reasoning_effort`` (or ``reasoning.effort``); native ``think`` is unread."""
    value = body.get("reasoning_effort")
    r = body.get("reasoning")
    if value is None and isinstance(r, dict):
        value = r.get("effort")
    if value is None:
        return None
    if value not in _OLLAMA_EFFORTS:
        # ollama openai/openai.go: only these four strings are accepted.
        raise VendorError(
            400,
            f"invalid reasoning value: '{value}' (must be \"high\", \"medium\", \"low\", or "
            "\"none\")",
        )
    return value != "none"


def template_kwargs(body: Body, fam: Family, api: Api) -> bool | None:
    """vLLM / SGLang / llama.cpp: ``chat_template_kwargs[<family key>]``.

    The key is the family's (``enable_thinking`` for Qwen3/GLM, ``thinking`` for DeepSeek-V3.x);
    the other key reaches the template but the template never reads it.
    """
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict):
        v = kwargs.get(fam.template_key)
        if isinstance(v, bool):
            return v
    return None


def openai_effort(body: Body, fam: Family, api: Api) -> bool | None:
    """OpenAI: ``reasoning_effort`` (Chat) / ``reasoning.effort`` (Responses); "none" = off."""
    value = effort_of(body, api)
    if value is None:
        return None
    return value != "none"


def effort_of(body: Body, api: Api) -> str | None:
    if api == "chat":
        v = body.get("reasoning_effort")
    else:
        r = body.get("reasoning")
        v = r.get("effort") if isinstance(r, dict) else None
    return v if isinstance(v, str) else None


# --- validators ---------------------------------------------------------------------------

# Documented top-level parameters (platform.openai.com API reference). Anything else is a 400.
OPENAI_CHAT_PARAMS = frozenset({
    "model", "messages", "audio", "frequency_penalty", "function_call", "functions",
    "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities",
    "n", "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier",
    "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature",
    "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
})
OPENAI_RESPONSES_PARAMS = frozenset({
    "model", "input", "instructions", "background", "conversation", "include",
    "max_output_tokens", "max_tool_calls", "metadata", "parallel_tool_calls",
    "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_retention",
    "reasoning", "safety_identifier", "service_tier", "store", "stream", "stream_options",
    "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user",
})


def openai_rules(view: RequestView) -> None:
    body, fam, api = view.body, view.family, view.api
    allowed = OPENAI_CHAT_PARAMS if api == "chat" else OPENAI_RESPONSES_PARAMS
    for key in body:
        if key not in allowed:
            raise VendorError(
                400, f"Unknown parameter: '{key}'.", param=key, code="unknown_parameter"
            )
    if "stream_options" in body and body.get("stream") is not True:
        raise VendorError(
            400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options", code="invalid_value",
        )
    reasoning_model = bool(fam.efforts)
    if api == "chat" and reasoning_model and "max_tokens" in body:
        raise VendorError(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            param="max_tokens", code="unsupported_parameter",
        )
    effort = effort_of(body, api)
    param = "reasoning_effort" if api == "chat" else "reasoning.effort"
    if effort is not None and not reasoning_model:
        raise VendorError(
            400, f"Unsupported parameter: '{param}' is not supported with this model.",
            param=param, code="unsupported_parameter",
        )
    if effort is not None and effort not in fam.efforts:
        supported = ", ".join(f"'{e}'" for e in fam.efforts)
        raise VendorError(
            400,
            f"Unsupported value: '{param}' does not support '{effort}' with this model. "
            f"Supported values are: {supported}.",
            param=param, code="unsupported_value",
        )
    temperature = body.get("temperature")
    if view.thinking and temperature is not None and temperature != 1:
        raise VendorError(
            400,
            f"Unsupported value: 'temperature' does not support {temperature} with this "
            "model. Only the default (1) value is supported.",
            param="temperature", code="unsupported_value",
        )


def openrouter_rules(view: RequestView) -> None:
    if view.family.mode == "always" and view.requested is False:
        raise VendorError(400, "Reasoning is mandatory for this endpoint and cannot be disabled.")


def dashscope_rules(view: RequestView) -> None:
    # Open-source qwen3-* on DashScope refuse non-streaming calls unless thinking is off;
    # silence counts as "on" here (spec: "always send false" is the safe rule).
    if view.family.stream_only_thinking and not view.stream and view.requested is not False:
        raise VendorError(
            400,
            "<400> InternalError.Algo.InvalidParameter: parameter.enable_thinking must be "
            "set to false for non-streaming calls",
            param="enable_thinking",
        )


def ark_rules(view: RequestView) -> None:
    t = view.body.get("thinking")
    if isinstance(t, dict) and t.get("type") not in ("enabled", "disabled", "auto"):
        raise VendorError(
            400, "The parameter `thinking.type` specified in the request are not valid.",
            param="thinking.type",
        )


# --- reasoning visibility ---------------------------------------------------------------------


def vllm_hides(body: Body) -> bool:
    """vLLM ``include_reasoning: false`` drops the text but the tokens are still spent."""
    return body.get("include_reasoning") is False


def openrouter_hides(body: Body) -> bool:
    r = body.get("reasoning")
    return isinstance(r, dict) and r.get("exclude") is True
