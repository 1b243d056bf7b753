"""Message and tool shapes for the two API styles.

The tiers speak Chat Completions messages and flat function tools (see `LLMRequest`). Chat
Completions wants tools nested under `function`; the Responses API wants flat tools and an
`input` list of items, with tool calls and their results as their own item types:

    {"role": "system", ...}                 -> `instructions` (leading ones) or a system item
    {"role": "user"|"assistant", content}   -> {"type": "message", "role", "content"}
    assistant `tool_calls[i]`               -> {"type": "function_call", "call_id", "name",
                                                "arguments": "<json string>"}
    {"role": "tool", tool_call_id, content} -> {"type": "function_call_output", "call_id",
                                                "output": "<string>"}

Pure functions; inputs are never mutated.
"""

from __future__ import annotations

import json
from typing import Any

_FUNCTION_FIELDS = ("name", "description", "parameters", "strict")


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flat function tools → Chat Completions `{"type": "function", "function": {...}}`."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if tool.get("type", "function") != "function" or "function" in tool:
            out.append(dict(tool))  # already nested, or not a function tool: as given
            continue
        fn = {k: tool[k] for k in _FUNCTION_FIELDS if k in tool}
        out.append({"type": "function", "function": fn})
    return out


def responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tools for the Responses API: flat as given; a nested Chat-style tool is flattened."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        fn = tool.get("function")
        if tool.get("type", "function") == "function" and isinstance(fn, dict):
            out.append({"type": "function", **fn})
        else:
            out.append(dict(tool))
    return out


def _text_of(content: Any) -> str:
    """Plain text of a content value: a string, a list of text parts, or anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return json.dumps(content, ensure_ascii=False)


def _content(role: str, content: Any) -> Any:
    """Message content for a Responses item: strings stay strings, parts are re-typed."""
    if not isinstance(content, list):
        return _text_of(content)
    text_type = "output_text" if role == "assistant" else "input_text"
    parts: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append({"type": text_type, "text": part.get("text", "")})
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append(part)
    return parts


def _arguments(value: Any) -> str:
    # The Responses API carries arguments as a JSON string, as Chat Completions does.
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _function_call(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    return {
        "type": "function_call",
        "call_id": call.get("id") or call.get("call_id") or "",
        "name": fn.get("name", ""),
        "arguments": _arguments(fn.get("arguments")),
    }


def responses_input(
    messages: list[dict[str, Any]],
) -> tuple[str | None, list[dict[str, Any]]]:
    """Chat messages → (`instructions`, `input` items) for the Responses API.

    Leading system messages become `instructions` (joined by a blank line); a system message
    later in the conversation stays in place as a system item, so its position is kept.
    Assistant `reasoning_content` is not carried over: the Responses API has no such field.
    """
    leading: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role", "user")
        content = message.get("content")
        if role == "system" and not items:
            leading.append(_text_of(content))
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id", ""),
                    "output": _text_of(content),
                }
            )
        elif role == "assistant" and message.get("tool_calls"):
            if content:
                items.append({"type": "message", "role": role, "content": _content(role, content)})
            items.extend(_function_call(call) for call in message["tool_calls"])
        else:
            items.append({"type": "message", "role": role, "content": _content(role, content)})
    return ("\n\n".join(leading) if leading else None), items
