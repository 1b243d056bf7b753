"""Responses API rendering (``/v1/responses``): a :class:`Plan` as a ``response`` or events.

Output items in order: ``reasoning`` (when the model thought), ``message`` (when there is
answer text, or nothing else), ``function_call`` per tool call. OpenAI returns reasoning
only as a summary and only when ``reasoning.summary`` is set (``reasoning_summary_text``
events); open servers return ``reasoning_text`` content. A ``length`` finish becomes
``status: "incomplete"`` with ``incomplete_details.reason = "max_output_tokens"`` and the
terminal event ``response.incomplete``; otherwise ``response.completed``. Usage always carries
``output_tokens_details.reasoning_tokens``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import orjson

from callout_server.emulator.personas import Persona
from callout_server.emulator.plan import Plan
from callout_server.emulator.tokens import pieces

_ids = itertools.count(1)
ARG_PIECE = 8
MALFORMED = b'event: response.output_text.delta\ndata: {"type":"response.output_text.de\n\n'
MALFORMED_BODY = b'{"id":"resp_malformed","object":"response","output":[{"type":'


def _usage(plan: Plan) -> dict[str, Any] | None:
    if plan.usage_override is not None and isinstance(plan.usage_override, dict):
        return plan.usage_override
    if plan.usage_override is None:
        return None
    return {
        "input_tokens": plan.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": plan.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": plan.reasoning_tokens},
        "total_tokens": plan.prompt_tokens + plan.completion_tokens,
    }


def _status(plan: Plan) -> tuple[str, dict[str, str] | None]:
    if plan.finish_reason == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if plan.finish_reason == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


class _Items:
    """Builds the output items once; both renderings read them."""

    def __init__(self, persona: Persona, plan: Plan, body: dict[str, Any]) -> None:
        n = next(_ids)
        self.rid = f"resp_{n:012x}"
        self.reasoning: dict[str, Any] | None = None
        self.reasoning_pieces: list[str] = []
        self.summary_mode = persona.responses_reasoning == "summary"
        text = plan.content
        hidden = persona.hides is not None and persona.hides(body)
        if plan.thinking and (plan.reasoning_tokens or plan.reasoning):
            visible = bool(plan.reasoning) and not hidden
            if persona.reasoning_at == "inline":
                if visible:
                    closer = "\n</think>\n\n" if plan.finish_reason != "length" or text else ""
                    text = f"<think>\n{plan.reasoning}{closer}{text}"
            else:
                self.reasoning = {"id": f"rs_{n:012x}", "type": "reasoning", "summary": []}
                if self.summary_mode:
                    r = body.get("reasoning")
                    asked = isinstance(r, dict) and r.get("summary") is not None
                    if visible and asked:
                        self.reasoning_pieces = pieces(plan.reasoning)
                        self.reasoning["summary"] = [
                            {"type": "summary_text", "text": plan.reasoning}]
                else:
                    self.reasoning["content"] = []
                    if visible:
                        self.reasoning_pieces = pieces(plan.reasoning)
                        self.reasoning["content"] = [
                            {"type": "reasoning_text", "text": plan.reasoning}]
        self.text = text
        self.text_pieces = plan.content_pieces if text == plan.content else pieces(text)
        status, _ = _status(plan)
        self.message: dict[str, Any] | None = None
        if text or not (plan.tool_calls or plan.finish_reason == "length"):
            self.message = {
                "id": f"msg_{n:012x}", "type": "message", "role": "assistant",
                "status": "completed" if status == "completed" else "incomplete",
                "content": [{"type": "output_text", "text": text, "annotations": [],
                             "logprobs": []}],
            }
        self.calls = [
            {"id": f"fc_{n:08x}{i}", "type": "function_call", "status": "completed",
             "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for i, c in enumerate(plan.tool_calls)
        ]

    def output(self) -> list[dict[str, Any]]:
        head = [x for x in (self.reasoning, self.message) if x is not None]
        return head + self.calls


def _envelope(rid: str, plan: Plan, body: dict[str, Any], status: str,
              output: list[dict[str, Any]], usage: dict[str, Any] | None,
              incomplete: dict[str, str] | None) -> dict[str, Any]:
    return {
        "id": rid, "object": "response", "created_at": int(time.time()), "status": status,
        "error": None, "incomplete_details": incomplete,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"), "model": plan.model,
        "output": output, "parallel_tool_calls": True,
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools", []),
        "usage": usage,
    }


def render(persona: Persona, plan: Plan, body: dict[str, Any], no_choices: bool
           ) -> dict[str, Any]:
    items = _Items(persona, plan, body)
    status, incomplete = _status(plan)
    output = [] if no_choices else items.output()
    return _envelope(items.rid, plan, body, status, output, _usage(plan), incomplete)


def stream(persona: Persona, plan: Plan, body: dict[str, Any], no_choices: bool
           ) -> Iterator[bytes]:
    items = _Items(persona, plan, body)
    seq = itertools.count(0)

    def event(kind: str, **data: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(seq), **data}
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

    pending = _envelope(items.rid, plan, body, "in_progress", [], None, None)
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    index = 0
    if not no_choices and items.reasoning is not None:
        r = items.reasoning
        yield event("response.output_item.added", output_index=index,
                    item={**r, "summary": [], **({} if items.summary_mode else {"content": []})})
        if items.reasoning_pieces and items.summary_mode:
            where = {"item_id": r["id"], "output_index": index, "summary_index": 0}
            yield event("response.reasoning_summary_part.added", **where,
                        part={"type": "summary_text", "text": ""})
            for p in items.reasoning_pieces:
                yield event("response.reasoning_summary_text.delta", **where, delta=p)
            full = r["summary"][0]["text"]
            yield event("response.reasoning_summary_text.done", **where, text=full)
            yield event("response.reasoning_summary_part.done", **where,
                        part={"type": "summary_text", "text": full})
        elif items.reasoning_pieces:
            where = {"item_id": r["id"], "output_index": index, "content_index": 0}
            for p in items.reasoning_pieces:
                yield event("response.reasoning_text.delta", **where, delta=p)
            yield event("response.reasoning_text.done", **where, text=r["content"][0]["text"])
        yield event("response.output_item.done", output_index=index, item=r)
        index += 1
    if not no_choices and items.message is not None:
        m = items.message
        yield event("response.output_item.added", output_index=index,
                    item={**m, "status": "in_progress", "content": []})
        where = {"item_id": m["id"], "output_index": index, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        yield event("response.content_part.added", **where, part=empty)
        for p in items.text_pieces:
            yield event("response.output_text.delta", **where, delta=p, logprobs=[])
        yield event("response.output_text.done", **where, text=items.text, logprobs=[])
        yield event("response.content_part.done", **where, part=m["content"][0])
        yield event("response.output_item.done", output_index=index, item=m)
        index += 1
    for call in [] if no_choices else items.calls:
        yield event("response.output_item.added", output_index=index,
                    item={**call, "status": "in_progress", "arguments": ""})
        args = call["arguments"]
        for start in range(0, len(args), ARG_PIECE):
            yield event("response.function_call_arguments.delta", item_id=call["id"],
                        output_index=index, delta=args[start:start + ARG_PIECE])
        yield event("response.function_call_arguments.done", item_id=call["id"],
                    output_index=index, name=call["name"], arguments=args)
        yield event("response.output_item.done", output_index=index, item=call)
        index += 1
    status, incomplete = _status(plan)
    final = _envelope(items.rid, plan, body, status, [] if no_choices else items.output(),
                      _usage(plan), incomplete)
    yield event("response.completed" if status == "completed" else "response.incomplete",
                response=final)
