"""Pieces both API-style adapters share: usage, tool-call assembly, in-band errors."""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from callout_server.llm.events import ToolCall, Usage


class InBandError(Exception):
    """The vendor reported a failure inside a 200 response (an `error` object or event).

    `detail` is the vendor's own message, raw: the client scrubs it of the key, cuts it and
    translates it into `LLMCallError(upstream_error)` at its single translation point. The
    exception's own text stays generic, since it is chained (`from`) into tracebacks.
    """

    def __init__(self, detail: str) -> None:
        super().__init__("the vendor reported an error inside a 200 response")
        self.detail = detail


class MalformedPayload(Exception):
    """A response body or stream chunk that is not the JSON object the API style promises."""


# A token count past this (or below 0) is none a vendor can mean: not believed, as if it
# had sent none. Believed, a negative one lowered a key's spent budget and its usage, and
# one past 64 bits made Redis refuse the budget's count (service_keys/limits.py).
USAGE_MAX = 2**31 - 1  # what the call log's integer columns hold


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= USAGE_MAX:
        return value
    return None


def parse_usage(raw: Any) -> Usage | None:
    """Usage from either style: Chat Completions `prompt_tokens`/`completion_tokens` with
    `completion_tokens_details.reasoning_tokens`, or Responses `input_tokens`/`output_tokens`
    with `output_tokens_details.reasoning_tokens`. Some servers put `reasoning_tokens` at the
    top level of `usage`; that is read too."""
    if not isinstance(raw, dict):
        return None
    prompt = _int(raw.get("prompt_tokens"))
    if prompt is None:
        prompt = _int(raw.get("input_tokens"))
    completion = _int(raw.get("completion_tokens"))
    if completion is None:
        completion = _int(raw.get("output_tokens"))
    details = raw.get("completion_tokens_details") or raw.get("output_tokens_details")
    reasoning = _int(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    if reasoning is None:
        reasoning = _int(raw.get("reasoning_tokens"))
    return Usage(prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=reasoning)


def error_detail(err: Any, limit: int = 8192) -> str:
    """The human part of a vendor error object (`{"message", "code", "type"}` or a string).

    Bounded only for memory: the client scrubs the key out first and cuts after.
    """
    if isinstance(err, dict):
        message = err.get("message") or err.get("msg") or err.get("detail")
        code = err.get("code") or err.get("type")
        text = str(message) if message else ""
        if code and str(code) not in text:
            text = f"{code}: {text}" if text else str(code)
        text = text or orjson.dumps(err).decode()
    else:
        text = str(err)
    return text[:limit]


def new_call_id() -> str:
    # Vendors' ids collide across calls and some send none; ours are unique per tool call.
    return f"call_{uuid.uuid4().hex}"


def make_tool_call(name: str, raw_arguments: Any) -> ToolCall:
    """A complete ToolCall. Arguments that are not a JSON object are kept only as
    `raw_arguments` with `arguments == {}`: the caller sees the raw text and can tell
    (`tool_call_arguments_valid`) rather than getting a guess."""
    if isinstance(raw_arguments, dict):  # a few servers send an object, not a string
        return ToolCall(new_call_id(), name, raw_arguments, orjson.dumps(raw_arguments).decode())
    raw = raw_arguments if isinstance(raw_arguments, str) else ""
    arguments: dict[str, Any] = {}
    if raw.strip():
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            arguments = parsed
    return ToolCall(new_call_id(), name, arguments, raw)


def tool_call_arguments_valid(call: ToolCall) -> bool:
    """False when the model's arguments were not a JSON object (truncated, or garbage)."""
    if call.arguments or not call.raw_arguments.strip():
        return True
    try:
        return isinstance(orjson.loads(call.raw_arguments), dict)
    except orjson.JSONDecodeError:
        return False


class ToolCallBuffer:
    """Accumulates one streamed function call (name once, arguments as deltas)."""

    __slots__ = ("arguments", "done", "name")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.arguments: list[str] = []
        self.done = False

    def build(self) -> ToolCall:
        self.done = True
        return make_tool_call(self.name, "".join(self.arguments))
