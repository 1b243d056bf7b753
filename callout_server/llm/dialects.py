"""Vendor dialects: who is at the other end of a base URL, and how it likes its requests.

A vendor is data. Each `Dialect` row says how to recognise the vendor (host patterns, port,
URL fragments), how its thinking is switched off and on (dotted body paths and values), where
`reasoning_effort` goes and which values it accepts, which budget key it reads, which body
keys it refuses (the request side, read by `request_body.py` / `thinking.py`), and where
chain-of-thought comes back: which message fields, and whether inline `<think>` may arrive
in the answer text (the response side, read by the adapters). Adding a vendor is a row in
`_ROWS` plus its test vectors (docs/architecture.md); the few rules data cannot express live
in `thinking.py`, keyed by `Dialect.control`. The console's vendor list, configuration
validation and the call log all read these rows.

Resolution order (docs/spec vendors.md, "Recommended resolution order"):
  1. an explicit `LLMConfig.vendor` naming a row wins;
  2. the normalised host (lower-case, no trailing `/`), then port / URL fragments, in row order;
  3. anything else is a self-hosted OpenAI-compatible server (`selfhosted`), whose thinking
     switch is chosen by model family (`MODEL_FAMILIES`) as a `chat_template_kwargs` key.

Facts here come from vendors.md (sources there); vendors change, so keep them as rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from callout_server.llm.config import LLMConfig
from callout_server.llm.model_names import OPENAI_MODELS

# How a dialect's thinking is controlled; `thinking.py` holds one small function per value.
#   none          no known request switch (Anthropic compat, Hugging Face router)
#   switch        fixed body settings from `thinking_off` / `thinking_on`
#   chat_template self-hosted: `chat_template_kwargs.<key>`, key chosen by model family
#   openai        OpenAI/Azure: `reasoning_effort` for reasoning models only (OPENAI_MODELS)
Control = Literal["none", "switch", "chat_template", "openai"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One value to place in the request body at a dotted path (`"thinking.type"`)."""

    path: str
    value: Any


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    display_name: str = ""  # what the console shows; the name when empty
    # Detection. `hosts` are fnmatch patterns on the lower-cased host; an empty row is never
    # detected, only chosen by an explicit `LLMConfig.vendor`.
    hosts: tuple[str, ...] = ()
    host_contains: tuple[str, ...] = ()
    url_contains: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    # Thinking.
    control: Control = "switch"
    thinking_off: Setting | None = None
    thinking_on: Setting | None = None
    # What the vendor does when sent nothing, where known (lets us report "suppressed"
    # honestly when no key was needed).
    default_thinking: bool | None = None
    # Send the off switch even for "vendor default" on non-streaming calls (DashScope).
    off_unless_streaming: bool = False
    # reasoning_effort: where it goes (None = never sent) and the accepted values
    # (None = passed through unchecked: the vendor's set is not known to us).
    effort_path: str | None = "reasoning_effort"
    effort_values: tuple[str, ...] | None = None
    # Request shape.
    budget_key: str = "max_tokens"
    stream_usage: bool = True  # send stream_options.include_usage when streaming
    refused_keys: frozenset[str] = frozenset()  # removed even from extra_params
    # The request field a server schedules by, lower first (None: the vendor has none we
    # know); sent only when the configuration asks (`send_priority`), see request_body.py.
    priority_key: str | None = None
    # Response shape: message/delta fields carrying chain-of-thought (the first one present
    # is read: during vLLM's rename both carried the same text), and whether it may arrive
    # inline in the answer text as <think>…</think> (no reasoning parser on the server).
    reasoning_fields: tuple[str, ...] = ("reasoning_content",)
    inline_think: bool = False
    # The base URL a new configuration starts from when the operator picks this vendor (the
    # console's presets): the vendor's documented OpenAI-compatible root, or a self-hosted
    # server's default local port. Hosted ones are detected back as this row.
    base_url: str = ""

    @property
    def label(self) -> str:
        return self.display_name or self.name

    @property
    def thinking_switch(self) -> bool:
        """Whether we know a request setting that switches this vendor's thinking."""
        return self.control != "none"

    def detection(self) -> dict[str, Any]:
        """How the row is recognised from a base URL (all empty and no fallback: only by
        explicit name); `fallback`: the row for any base URL no other row recognises."""
        return {"hosts": list(self.hosts), "host_contains": list(self.host_contains),
                "url_contains": list(self.url_contains), "ports": list(self.ports),
                "fallback": self is FALLBACK}

    def accepted_efforts(self) -> tuple[str, ...] | None:
        """`reasoning_effort` values we send: () never sent, None passed through unchecked."""
        if self.effort_path is None:
            return ()
        if self.control == "openai":  # per model (OPENAI_MODELS): every value some accepts
            known = {e for row in OPENAI_MODELS for e in row.efforts}
            return tuple(e for e in EFFORT_ORDER if e in known)
        return self.effort_values

    def matches(self, host: str, port: int | None, url: str) -> bool:
        return (
            any(fnmatchcase(host, pattern) for pattern in self.hosts)
            or any(part in host for part in self.host_contains)
            or any(part in url for part in self.url_contains)
            or (port is not None and port in self.ports)
        )


def _thinking_type(**kw: Any) -> Dialect:
    """`thinking: {"type": "disabled" | "enabled"}`, the DeepSeek/Zhipu/Kimi/Ark switch."""
    return Dialect(
        thinking_off=Setting("thinking.type", "disabled"),
        thinking_on=Setting("thinking.type", "enabled"),
        **kw,
    )


def _enable_thinking(**kw: Any) -> Dialect:
    """Top-level `enable_thinking: bool` (DashScope, SiliconFlow)."""
    return Dialect(
        thinking_off=Setting("enable_thinking", False),
        thinking_on=Setting("enable_thinking", True),
        **kw,
    )


def _self_hosted(name: str, display_name: str, **kw: Any) -> Dialect:
    # vLLM: `message.reasoning` (renamed from reasoning_content, PR #27752); SGLang and
    # llama.cpp: `reasoning_content`; without a reasoning parser CoT stays inline in content.
    return Dialect(
        name=name,
        display_name=display_name,
        control="chat_template",
        reasoning_fields=("reasoning", "reasoning_content"),
        inline_think=True,
        **kw,
    )


# Keys OpenAI answers with 400 "Unknown parameter" / Azure "Unrecognized request argument".
# `reasoning` is a real Responses API field, so request_body exempts it for that style.
_OPENAI_REFUSED = frozenset(
    {
        "chat_template_kwargs",
        "enable_thinking",
        "thinking",
        "thinking_budget",
        "include_reasoning",
        "separate_reasoning",
        "reasoning",
    }
)

_OPENAI_LIKE: dict[str, Any] = {
    "control": "openai",
    "budget_key": "max_completion_tokens",  # max_tokens is refused by o-series / gpt-5.x
    "refused_keys": _OPENAI_REFUSED,
    "reasoning_fields": (),  # Chat Completions never returns reasoning text
}

# Row order is detection order: specific hosts first, heuristics (port, "ollama", "gpustack")
# after, the generic self-hosted fallback last.
_ROWS: tuple[Dialect, ...] = (
    Dialect(name="openai", display_name="OpenAI", hosts=("api.openai.com",),
            base_url="https://api.openai.com/v1", **_OPENAI_LIKE),
    Dialect(name="azure", display_name="Azure OpenAI", hosts=("*.openai.azure.com",),
            base_url="https://RESOURCE.openai.azure.com/openai/v1", **_OPENAI_LIKE),
    # DeepSeek: effort only in thinking mode; minimal→low, medium/xhigh→high server-side.
    # chat_template_kwargs dropped (design decision, spec step 4).
    _thinking_type(
        name="deepseek",
        display_name="DeepSeek",
        hosts=("api.deepseek.com",),
        base_url="https://api.deepseek.com/v1",
        default_thinking=True,  # V4 models think by default
        effort_values=("minimal", "low", "medium", "high", "xhigh", "max"),
        refused_keys=frozenset({"chat_template_kwargs"}),
    ),
    # DashScope ignores chat_template_kwargs; open-source qwen3-* answer 400 on non-streaming
    # calls unless enable_thinking=false, so "vendor default" becomes false there.
    _enable_thinking(
        name="dashscope",
        display_name="Alibaba DashScope (Model Studio)",
        hosts=("dashscope*.aliyuncs.com",),
        base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        off_unless_streaming=True,
    ),
    _enable_thinking(
        name="siliconflow", display_name="SiliconFlow", hosts=("api.siliconflow.*",),
        base_url="https://api.siliconflow.cn/v1"),
    # Zhipu: default enabled (omitting the key is not off); GLM-Z1 puts <think> in content.
    _thinking_type(
        name="zai",
        display_name="Zhipu / Z.AI (GLM)",
        hosts=("api.z.ai", "open.bigmodel.cn"),
        base_url="https://open.bigmodel.cn/api/paas/v4",
        default_thinking=True,
        inline_think=True,
    ),
    _thinking_type(
        name="kimi", display_name="Moonshot Kimi", hosts=("api.moonshot.*", "api.kimi.com"),
        base_url="https://api.moonshot.cn/v1"),
    _thinking_type(name="ark", display_name="Volcengine Ark (Doubao)", hosts=("*.volces.com",),
                   base_url="https://ark.cn-beijing.volces.com/api/v3"),
    Dialect(
        name="openrouter",
        display_name="OpenRouter",
        hosts=("openrouter.ai",),
        base_url="https://openrouter.ai/api/v1",
        thinking_off=Setting("reasoning.effort", "none"),
        thinking_on=Setting("reasoning.enabled", True),
        effort_path="reasoning.effort",
        effort_values=("none", "minimal", "low", "medium", "high", "xhigh"),
        reasoning_fields=("reasoning",),
    ),
    # Gemini compat: "none" disables (2.5 Flash); the endpoint rejected "minimal" for
    # Gemini 3 Flash ("Valid values are: high, low, medium, none").
    Dialect(
        name="gemini",
        display_name="Google Gemini (OpenAI-compatible)",
        hosts=("generativelanguage.googleapis.com",),
        base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        thinking_off=Setting("reasoning_effort", "none"),
        default_thinking=True,
        effort_values=("none", "low", "medium", "high"),
        reasoning_fields=(),
    ),
    # Anthropic compat: extended thinking is off unless requested; reasoning_effort ignored.
    Dialect(
        name="anthropic",
        display_name="Anthropic (OpenAI SDK compatibility)",
        hosts=("api.anthropic.com",),
        base_url="https://api.anthropic.com/v1",
        control="none",
        default_thinking=False,
        effort_path=None,
        reasoning_fields=(),
    ),
    # Hugging Face router: the provider behind a model varies, so send only what is configured.
    Dialect(
        name="huggingface",
        display_name="Hugging Face router",
        hosts=("router.huggingface.co",),
        base_url="https://router.huggingface.co/v1",
        control="none",
        reasoning_fields=("reasoning_content", "reasoning"),
        inline_think=True,
    ),
    # Ollama /v1 reads reasoning_effort only (not `think`), accepts high/medium/low/none and
    # thinks by default; "enabled" is left implicit because any effort on a non-thinking
    # model is a 400 ("does not support thinking").
    Dialect(
        name="ollama",
        display_name="Ollama",
        ports=(11434,),
        host_contains=("ollama",),
        base_url="http://127.0.0.1:11434/v1",
        thinking_off=Setting("reasoning_effort", "none"),
        default_thinking=True,
        effort_values=("none", "low", "medium", "high"),
        reasoning_fields=("reasoning",),
        inline_think=True,
    ),
    _self_hosted("gpustack", "GPUStack", url_contains=("gpustack",),
                 base_url="http://gpustack.internal/v1"),
    # The servers' own default ports on this host.
    # `priority` (lower first) with `--scheduling-policy priority`; any other server 400s
    # a non-zero one (vllm entrypoints/openai protocol.py), hence opt-in per configuration.
    _self_hosted("vllm", "vLLM", base_url="http://127.0.0.1:8000/v1", priority_key="priority"),
    _self_hosted("sglang", "SGLang", base_url="http://127.0.0.1:30000/v1"),
    _self_hosted("llamacpp", "llama.cpp server", base_url="http://127.0.0.1:8080/v1"),
    # The fallback for any host not recognised above.
    _self_hosted("selfhosted", "Self-hosted OpenAI-compatible"),
)

DIALECTS: Mapping[str, Dialect] = MappingProxyType({d.name: d for d in _ROWS})
FALLBACK = DIALECTS["selfhosted"]
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


def _split(base_url: str) -> tuple[str, int | None, str]:
    """(host, port, normalised URL): lower-cased, trailing `/` stripped, scheme optional."""
    url = base_url.strip().rstrip("/").lower()
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:  # a malformed port never decides a dialect
        port = None
    return parts.hostname or "", port, url


@lru_cache(maxsize=512)  # pure and on the hot path: a config has few distinct values
def detect_dialect(base_url: str) -> Dialect:
    """The dialect recognised from a base URL alone (no explicit vendor)."""
    host, port, url = _split(base_url)
    for dialect in _ROWS:
        if dialect.matches(host, port, url):
            return dialect
    return FALLBACK


def explicit_dialect(vendor: str | None) -> Dialect | None:
    """The row an explicit `LLMConfig.vendor` names, or None (unset or unknown name)."""
    if not vendor:
        return None
    return DIALECTS.get(vendor.strip().lower())


def resolve_dialect(cfg: LLMConfig) -> Dialect:
    """Explicit `cfg.vendor` first, then detection from `cfg.base_url`.

    An unknown vendor name falls back to detection rather than failing a live call:
    configuration validation rejects it up front (`DIALECTS` lists the names), and
    `build_request` records a note when it happens anyway.
    """
    return explicit_dialect(cfg.vendor) or detect_dialect(cfg.base_url)
