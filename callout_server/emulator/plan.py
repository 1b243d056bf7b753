"""The pure core: request + persona + reply → what the model "generated" (a :class:`Plan`).

Thinking decision: the family says whether the model reasons (never / always / hybrid with a
default); for hybrids the persona's switch reader says what the request asked for. Then the
vendor's validator runs (it may 400).

Budget realism: reasoning is generated first and spends the output budget of every budget key
that counts it (``max_tokens`` on most vendors, ``max_completion_tokens`` on OpenAI, …). If the
budget runs out while reasoning, the answer is empty and ``finish_reason`` is ``length`` with
``completion_tokens == budget``; if it runs out during the answer, the answer is truncated.
A ``thinking_budget`` key (DashScope, SiliconFlow) cuts reasoning short and lets the answer run.
Rendering (which field, inline tags, vendor null-vs-"") is left to the API modules.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from callout_server.emulator import textgen, tokens
from callout_server.emulator.families import SCRIPTED, Family, family_of
from callout_server.emulator.personas import Persona
from callout_server.emulator.rules import Api, RequestView, effort_of
from callout_server.emulator.scripts import UNSET, Reply

_call_ids = itertools.count(1)


@dataclass(slots=True)
class ToolCallPlan:
    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Plan:
    model: str
    family: Family
    thinking: bool
    reasoning: str  # visible reasoning text after truncation ("" when none)
    reasoning_tokens: int
    content: str
    content_pieces: list[str]
    tool_calls: list[ToolCallPlan] = field(default_factory=list)
    finish_reason: str | None = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_override: Any = UNSET
    stock_chat: bool = False  # the answer is the persona's stock chat reply (see pace.py)

    def usage(self, persona: Persona) -> dict[str, Any] | None:
        if self.usage_override is not UNSET:
            return self.usage_override  # type: ignore[no-any-return]
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if persona.reports_reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return usage


def _decide(fam: Family, requested: bool | None) -> bool:
    if fam.mode == "never":
        return False
    if fam.mode == "always":
        return True
    return fam.default_on if requested is None else requested


def _min_int(body: dict[str, Any], keys: list[str]) -> int | None:
    values = [v for k in keys if isinstance(v := body.get(k), int) and not isinstance(v, bool)]
    return min(values) if values else None


def _json_mode(body: dict[str, Any], api: Api) -> tuple[str, Any] | None:
    if api == "chat":
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
            schema = (fmt.get("json_schema") or {}).get("schema")
            return fmt["type"], schema
        return None
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        return fmt["type"], fmt.get("schema")
    return None


def _prompt(body: dict[str, Any], api: Api) -> str:
    if api == "chat":
        return textgen.prompt_text(body.get("messages"))
    instructions = body.get("instructions")
    text = textgen.prompt_text(body.get("input"))
    return f"{instructions}\n{text}" if isinstance(instructions, str) else text


def _tool_calls(reply: Reply) -> list[ToolCallPlan]:
    calls = []
    for tc in reply.tool_calls or ():
        args = tc.get("arguments", {})
        raw = args if isinstance(args, str) else orjson.dumps(args).decode()
        calls.append(
            ToolCallPlan(id=tc.get("id") or f"call_{next(_call_ids):08x}", name=tc["name"],
                         arguments=raw)
        )
    return calls


def make_plan(
    persona: Persona, api: Api, body: dict[str, Any], reply: Reply, stream: bool
) -> Plan:
    """Decide thinking, validate (may raise ``VendorError``), then spend the budget."""
    model: str = body["model"]
    fam = family_of(model)
    if fam.unknown and (reply.reasoning is not None or reply.reasoning_tokens is not None):
        fam = SCRIPTED
    requested = persona.switch(body, fam, api)
    thinking = _decide(fam, requested)
    if persona.validate is not None:
        persona.validate(RequestView(body, fam, api, stream, requested, thinking))

    prompt = _prompt(body, api)
    # The persona's own answer, only when the script leaves something to it.
    default_needed = (reply.content is None and not reply.tool_calls) or (
        thinking and reply.reasoning is None and reply.reasoning_tokens is None)
    default = textgen.default_reply(prompt, _json_mode(body, api)) if default_needed else None

    # --- what the model wants to produce ------------------------------------------------
    r_text, r_tokens = "", 0
    if thinking:
        if reply.reasoning is not None:
            r_text = reply.reasoning
            r_tokens = reply.reasoning_tokens or len(tokens.pieces(r_text))
        elif reply.reasoning_tokens is not None:
            r_tokens = reply.reasoning_tokens
        else:
            assert default is not None
            r_tokens = textgen.reasoning_budget_for(effort_of(body, api))
            r_text = textgen.reasoning_text(default.reasoning_lead, r_tokens)
    if reply.content is not None:
        content = reply.content
    elif reply.tool_calls:
        content = ""
    else:
        assert default is not None
        content = default.content
    a_pieces = reply.chunks if reply.chunks is not None else tokens.pieces(content)
    calls = _tool_calls(reply)

    # --- spend the budget ---------------------------------------------------------------
    if api == "chat":
        total = _min_int(body, [k for k, counts in persona.budget_keys if counts])
        answer_cap = _min_int(body, [k for k, counts in persona.budget_keys if not counts])
        think_cap = _min_int(body, [persona.thinking_budget_key or ""])
    else:
        total, answer_cap, think_cap = _min_int(body, ["max_output_tokens"]), None, None

    r_used = r_tokens if think_cap is None else min(r_tokens, think_cap)
    truncated = False
    if total is not None and r_used > 0 and r_used >= total:
        r_used, truncated = total, True
        answer_room: int | None = 0
    else:
        answer_room = None if total is None else total - r_used
    if answer_cap is not None:
        answer_room = answer_cap if answer_room is None else min(answer_room, answer_cap)
    if r_used < r_tokens and r_text:
        r_text = "".join(tokens.pieces(r_text)[: len(tokens.pieces(r_text)) * r_used
                                                // r_tokens])

    a_tokens = len(tokens.pieces(content)) if reply.chunks is not None else len(a_pieces)
    if answer_room is not None and a_tokens > answer_room:
        kept = tokens.pieces(content)[:answer_room]
        content, a_pieces, a_tokens, truncated = "".join(kept), kept, len(kept), True
        calls = []
    for i, call in enumerate(calls):
        arg_pieces = tokens.pieces(call.arguments)
        room = None if answer_room is None else answer_room - a_tokens
        if room is not None and len(arg_pieces) > room:
            # A call the budget never reached is not emitted; a started one is cut off.
            if room > 0:
                call.arguments = "".join(arg_pieces[:room])
                a_tokens += room
            del calls[i + (room > 0):]
            truncated = True
            break
        a_tokens += len(arg_pieces)

    if reply.finish_reason is not UNSET:
        finish = reply.finish_reason
    elif truncated:
        finish = "length"
    else:
        finish = "tool_calls" if calls else "stop"

    return Plan(
        model=model, family=fam, thinking=thinking, reasoning=r_text, reasoning_tokens=r_used,
        content=content, content_pieces=a_pieces, tool_calls=calls, finish_reason=finish,
        prompt_tokens=tokens.prompt_tokens(prompt),
        completion_tokens=r_used + a_tokens, usage_override=reply.usage,
        stock_chat=reply.content is None and not reply.tool_calls and default is not None
        and default.chat,
    )
