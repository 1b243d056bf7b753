"""Build the URL and JSON body of one model call, for either API style, in the vendor's dialect.

Order of assembly (later steps win):
  1. the style's core body: model, messages/input, stream, output budget, temperature,
     tools, JSON mode;
  2. the dialect's thinking / reasoning-effort settings (`thinking.py`);
  3. the tier's priority (`TIER_PRIORITY`) when the configuration asks for it
     (`send_priority`) and the dialect has the field (vLLM's `priority`), else a note;
  4. `cfg.extra_params`, then `req.extra_params`: last-writer-wins per key, except that a dict
     for `chat_template_kwargs` is merged key-wise into the one already there; `model`,
     `messages`, `input` and `stream` are never overridden (validation elsewhere rejects them
     with 422; here they are simply ignored);
  5. keys the dialect refuses are removed, even when extra_params put them there (OpenAI
     answers 400 to unknown parameters; DeepSeek gets no chat_template_kwargs).

Anything dropped on the way is explained in `BuiltRequest.notes`. No credentials here: the
client adds the Authorization header; the body never holds the key.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from callout_server.llm.config import PROTECTED_BODY_KEYS, TIER_PRIORITY, LLMConfig
from callout_server.llm.dialects import DIALECTS, Dialect, resolve_dialect
from callout_server.llm.messages import chat_tools, responses_input, responses_tools
from callout_server.llm.request import LLMRequest
from callout_server.llm.thinking import shape_thinking

_PATHS = {"chat-completions": "/chat/completions", "responses": "/responses"}
# Chat-style settings that the Responses API spells differently.
_RESPONSES_PATHS = {"reasoning_effort": "reasoning.effort"}
# Fields the Responses API itself defines: never "unknown" there, whatever the dialect.
_RESPONSES_NATIVE = frozenset({"reasoning", "text", "instructions", "max_output_tokens"})
_MERGED_KEYS = frozenset({"chat_template_kwargs"})


@dataclass(frozen=True, slots=True)
class BuiltRequest:
    url: str  # full URL incl. /chat/completions or /responses
    body: dict[str, Any]
    dialect: str  # dialect name
    # Effective thinking switch we sent: False = suppressed, True = allowed,
    # None = vendor default (nothing sent, or nothing that settles it).
    thinking: bool | None
    max_tokens: int  # the output budget sent
    row: Dialect  # the resolved dialect: the adapters read its response side
    notes: tuple[str, ...] = ()  # what was dropped or adjusted, and why (safe to log)


@lru_cache(maxsize=512)  # once per configuration, not per call (a quarter of build_request)
def endpoint_url(base_url: str, api_style: str) -> str:
    """`base_url` + the style's path; a trailing `/` and any query string are kept sane."""
    parts = urlsplit(base_url.strip())
    suffix = _PATHS[api_style]
    path = parts.path.rstrip("/")
    if not path.endswith(suffix):  # tolerate a base URL that already names the endpoint
        path += suffix
    return urlunsplit(parts._replace(path=path))


def build_request(cfg: LLMConfig, req: LLMRequest, *, stream: bool) -> BuiltRequest:
    dialect = resolve_dialect(cfg)
    notes: list[str] = []
    if cfg.vendor and cfg.vendor.strip().lower() not in DIALECTS:
        notes.append(f"unknown vendor {cfg.vendor!r} ignored; detected {dialect.name}")
    responses = cfg.api_style == "responses"
    budget = req.max_tokens if req.max_tokens is not None else cfg.max_tokens
    temperature = req.temperature if req.temperature is not None else cfg.temperature
    shaping = shape_thinking(dialect, cfg, req, stream=stream)
    notes.extend(shaping.notes)
    if shaping.drop_temperature and temperature is not None:
        notes.append("temperature dropped: reasoning models accept only the default")
        temperature = None

    if responses:
        budget_key = "max_output_tokens"
        body = _responses_body(cfg, req, stream=stream)
    else:
        budget_key = dialect.budget_key
        body = _chat_body(cfg, req, dialect, stream=stream)
    body[budget_key] = budget
    if temperature is not None:
        body["temperature"] = temperature
    _add_tools_and_format(body, req, responses=responses)

    for setting in shaping.settings:
        path = _RESPONSES_PATHS.get(setting.path, setting.path) if responses else setting.path
        _put(body, path, setting.value)
    if cfg.send_priority:  # before extra_params: an explicit priority there wins
        if dialect.priority_key is None:
            notes.append(f"send_priority: {dialect.name} has no priority field; none sent")
        else:
            body[dialect.priority_key] = TIER_PRIORITY.get(cfg.tier, 1)
    _apply_extra(body, cfg.extra_params, notes)
    _apply_extra(body, req.extra_params, notes)
    refused = dialect.refused_keys - _RESPONSES_NATIVE if responses else dialect.refused_keys
    for key in sorted(refused & body.keys()):
        del body[key]
        notes.append(f"{key!r} removed: {dialect.name} refuses it")

    sent_budget = body.get(budget_key)
    return BuiltRequest(
        url=endpoint_url(cfg.base_url, cfg.api_style),
        body=body,
        dialect=dialect.name,
        thinking=shaping.thinking,
        max_tokens=sent_budget if isinstance(sent_budget, int) else budget,
        row=dialect,
        notes=tuple(notes),
    )


def _chat_body(
    cfg: LLMConfig, req: LLMRequest, dialect: Dialect, *, stream: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": cfg.model, "messages": list(req.messages), "stream": stream}
    if stream and dialect.stream_usage:
        # Without it most servers send no usage chunk, and truncation diagnosis needs usage.
        body["stream_options"] = {"include_usage": True}
    return body


def _responses_body(cfg: LLMConfig, req: LLMRequest, *, stream: bool) -> dict[str, Any]:
    instructions, items = responses_input(req.messages)
    body: dict[str, Any] = {"model": cfg.model, "input": items, "stream": stream}
    if instructions is not None:
        body["instructions"] = instructions
    return body


def _add_tools_and_format(body: dict[str, Any], req: LLMRequest, *, responses: bool) -> None:
    if req.tools:
        body["tools"] = responses_tools(req.tools) if responses else chat_tools(req.tools)
    if req.json_mode:
        if responses:
            body["text"] = {"format": {"type": "json_object"}}
        else:
            body["response_format"] = {"type": "json_object"}


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted path (`"thinking.type"`), creating or merging into dicts on the way."""
    *parents, leaf = path.split(".")
    node = body
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[leaf] = value


def _apply_extra(body: dict[str, Any], extra: dict[str, Any], notes: list[str]) -> None:
    for key, value in extra.items():
        if key in PROTECTED_BODY_KEYS:
            notes.append(f"extra_params key {key!r} ignored: it defines the call itself")
            continue
        value = copy.deepcopy(value)  # the body must never alias the configuration
        current = body.get(key)
        if key in _MERGED_KEYS and isinstance(value, dict) and isinstance(current, dict):
            body[key] = {**current, **value}
        else:
            body[key] = value
