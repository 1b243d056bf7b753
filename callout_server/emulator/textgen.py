"""Default (unscripted) replies: what the model says when no script matched.

Deterministic, chosen from the prompt (:func:`default_reply`):

* **The NLU tier's prompt** (``nlu_prompt.py`` recognises it): the decision JSON the tier
  asks for, ``{"intent", "confidence", "slots"}``, decided from the offered intents, slots
  and the customer's utterance (``nlu_persona.py``), with or without JSON mode.
* **The script tier's prompt** (``script_brief.py``): a call script in the sections the
  prompt asks for, built from the brief, in its language (``script_persona.py``).
* Other prompts in JSON mode (Chat ``response_format`` json_object/json_schema, Responses
  ``text.format``): a JSON object. For ``json_object`` it is ``{"intent": X}``, X being the
  first name after an "intent(s)"/"意图" label followed by a colon anywhere in the prompt
  (e.g. ``可选意图：同意、拒绝`` → ``同意``; ``intents: ["agree", "refuse"]`` → ``agree``), or
  ``"unknown"``. For ``json_schema`` a minimal instance of the schema (first enum value, "",
  0, false, [] …), with a string ``intent`` property filled the same way.
* Otherwise :data:`DEFAULT_ANSWER`, a short multi-sentence Chinese reply, streamed at the
  emulator's chat pace (``pace.py``) unless the script sets its own timing.

When the model thinks, the reasoning text opens with what the persona weighed (the
utterance and the cue it picked, or the brief and the plan of the script), then runs on to
the reasoning budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from callout_server.emulator import nlu_persona, nlu_prompt, script_brief, script_persona
from callout_server.emulator.tokens import pieces

DEFAULT_ANSWER = "好的，我明白您的意思了。我们会尽快安排专人跟进您的需求。请问还有其他可以帮您的吗？"
_REASONING_SEED = "用户在询问相关事项，我需要先理解对方的真实意图，再结合上下文给出简洁准确的回答。"
DEFAULT_REASONING_TOKENS = 600
EFFORT_TOKENS = {"minimal": 16, "low": 200, "medium": 600, "high": 1200, "xhigh": 2000,
                 "max": 2000}

_INTENT = re.compile(
    r"(?:intents?|意图)[^\n:：]{0,20}[:：][\s\-*\[\"'`]*([A-Za-z_\u4e00-\u9fff][\w\u4e00-\u9fff.-]*)",
    re.IGNORECASE,
)


@lru_cache(maxsize=64)
def default_reasoning(tokens: int) -> str:
    """A reasoning text of exactly ``tokens`` wide characters."""
    reps = tokens // len(_REASONING_SEED) + 1
    return (_REASONING_SEED * reps)[:tokens]


def reasoning_budget_for(effort: str | None) -> int:
    return EFFORT_TOKENS.get(effort or "", DEFAULT_REASONING_TOKENS)


def reasoning_text(lead: str, tokens: int) -> str:
    """``lead`` then generic deliberation, ``tokens`` tokens in all (the budget realism of
    ``plan.py`` needs the length; the lead makes it read like this request's thinking)."""
    lead_pieces = pieces(lead)
    if len(lead_pieces) >= tokens:
        return "".join(lead_pieces[:tokens])
    return lead + default_reasoning(tokens - len(lead_pieces))


@dataclass(frozen=True, slots=True)
class Default:
    content: str
    reasoning_lead: str = ""
    chat: bool = False  # the stock conversational reply (streamed at the chat pace)


def default_reply(prompt: str, json_mode: tuple[str, Any] | None) -> Default:
    """The unscripted answer to ``prompt``; ``json_mode`` is (kind, schema) or None."""
    if json_mode is not None and json_mode[0] == "json_schema" and isinstance(
            json_mode[1], dict):
        task = _nlu(prompt)
        if task is None:
            return Default(json_answer("json_schema", json_mode[1], prompt))
        decision = nlu_persona.decide(task)
        value = _sample(json_mode[1], decision.intent, 0)
        if isinstance(value, dict):  # the decision's own fields where the schema has them
            value |= {k: v for k, v in (("confidence", decision.confidence),
                                        ("slots", decision.slots)) if k in value}
        return Default(orjson.dumps(value).decode(),
                       nlu_persona.reasoning_lead(task, decision))
    return _by_prompt(prompt, json_mode is not None)


@lru_cache(maxsize=256)
def _nlu(prompt: str) -> nlu_prompt.NluTask | None:
    return nlu_prompt.parse(prompt)


@lru_cache(maxsize=256)  # benchmarks send one prompt many times: decide it once
def _by_prompt(prompt: str, json_object: bool) -> Default:
    task = _nlu(prompt)
    if task is not None:
        decision = nlu_persona.decide(task)
        return Default(decision.to_json(), nlu_persona.reasoning_lead(task, decision))
    if json_object:
        return Default(json_answer("json_object", None, prompt))
    brief = script_brief.parse(prompt)
    if brief is not None:
        return Default(script_persona.write(brief), script_persona.reasoning_lead(brief))
    return Default(DEFAULT_ANSWER, chat=True)


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
