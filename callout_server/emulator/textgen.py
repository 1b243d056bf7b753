"""Pure text helpers: token approximation, stream pieces, the default (unscripted) replies.

Token model: one token per CJK character, one per up-to-4 other characters. A stream piece
is one such token, so "N tokens" and "N streamed chunks" agree, and truncating to a budget
is slicing a list.

Default replies (no script matched) are deterministic:

* JSON mode (Chat ``response_format`` json_object/json_schema, Responses ``text.format``):
  a JSON object. For ``json_object`` it is ``{"intent": X}``, X being the first name after an
  "intent(s)"/"意图" label followed by a colon anywhere in the prompt (e.g. ``可选意图：同意、
  拒绝`` → ``同意``; ``intents: ["agree", "refuse"]`` → ``agree``), or ``"unknown"``. For
  ``json_schema`` a minimal instance of the schema (first enum value, "", 0, false, [] …),
  with a string ``intent`` property filled the same way.
* Otherwise :data:`DEFAULT_ANSWER`, a short multi-sentence Chinese reply.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

DEFAULT_ANSWER = "好的，我明白您的意思了。我们会尽快安排专人跟进您的需求。请问还有其他可以帮您的吗？"
_REASONING_SEED = "用户在询问相关事项，我需要先理解对方的真实意图，再结合上下文给出简洁准确的回答。"
DEFAULT_REASONING_TOKENS = 600
EFFORT_TOKENS = {"minimal": 16, "low": 200, "medium": 600, "high": 1200, "xhigh": 2000,
                 "max": 2000}

# Everything from U+2E80 up (CJK, full-width punctuation) is "wide": one token per char.
_PIECE = re.compile(r"[\u2e80-\U0010ffff]|[^\u2e80-\U0010ffff]{1,4}")
_INTENT = re.compile(
    r"(?:intents?|意图)[^\n:：]{0,20}[:：][\s\-*\[\"'`]*([A-Za-z_\u4e00-\u9fff][\w\u4e00-\u9fff.-]*)",
    re.IGNORECASE,
)


def pieces(text: str) -> list[str]:
    """Split ``text`` into ~1-token pieces (the streaming unit)."""
    return _PIECE.findall(text) if text else []


def count_tokens(text: str) -> int:
    """Fast approximation for prompts: UTF-8 length tells wide characters apart in C."""
    if not text:
        return 0
    n = len(text)
    wide = (len(text.encode()) - n) // 2
    return wide + (n - wide + 3) // 4


@lru_cache(maxsize=64)
def default_reasoning(tokens: int) -> str:
    """A reasoning text of exactly ``tokens`` wide characters."""
    reps = tokens // len(_REASONING_SEED) + 1
    return (_REASONING_SEED * reps)[:tokens]


def reasoning_budget_for(effort: str | None) -> int:
    return EFFORT_TOKENS.get(effort or "", DEFAULT_REASONING_TOKENS)


def find_intent(prompt: str) -> str | None:
    m = _INTENT.search(prompt)
    return m.group(1) if m else None


def json_answer(kind: str, schema: Any, prompt: str) -> str:
    intent = find_intent(prompt)
    if kind == "json_schema" and isinstance(schema, dict):
        value = _sample(schema, intent, 0)
    else:
        value = {"intent": intent or "unknown"}
    return orjson.dumps(value).decode()


def _sample(schema: dict[str, Any], intent: str | None, depth: int) -> Any:
    if depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for alt in ("anyOf", "oneOf", "allOf"):
        if schema.get(alt):
            return _sample(schema[alt][0], intent, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for name in schema.get("required") or list(props):
            sub = props.get(name, {})
            enum = sub.get("enum")
            if name == "intent" and intent and (not enum or intent in enum):
                out[name] = intent
            else:
                out[name] = _sample(sub, intent, depth + 1)
        return out
    if kind == "array":
        items = schema.get("items") or {}
        return [_sample(items, intent, depth + 1) for _ in range(schema.get("minItems", 0))]
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(kind or "", None)


def prompt_text(messages: Any) -> str:
    """Concatenate the text of chat messages or Responses input items."""
    if isinstance(messages, str):
        return messages
    parts: list[str] = []
    if isinstance(messages, list):
        for m in messages:
            if not isinstance(m, dict):
                continue
            content = m.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(
                    p["text"] for p in content if isinstance(p, dict) and isinstance(
                        p.get("text"), str)
                )
    return "\n".join(parts)
