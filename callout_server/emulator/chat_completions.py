"""Chat Completions rendering: a :class:`Plan` as ``chat.completion`` or SSE chunks.

Stream shape (OpenAI): a role chunk, reasoning deltas (in the persona's field), content
deltas, tool calls (first delta per call carries ``id``/``type``/``name`` and empty
``arguments``, later deltas carry argument pieces by ``index``), a final chunk with an empty
delta and ``finish_reason``, then, with ``stream_options.include_usage``, a ``choices: []``
chunk with usage (every earlier chunk has ``"usage": null``), then ``data: [DONE]``.
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
ARG_PIECE = 8  # characters per tool-argument delta: "small pieces", like real servers
MALFORMED = b'data: {"id":"chatcmpl-malformed","object":"chat.completion.chunk","choices":[{"de\n\n'
MALFORMED_BODY = b'{"id":"chatcmpl-malformed","object":"chat.completion","choices":[{"index":0,'


def _reasoning_visible(persona: Persona, plan: Plan, body: dict[str, Any]) -> bool:
    if not plan.reasoning or persona.reasoning_at == "hidden":
        return False
    return not (persona.hides is not None and persona.hides(body))


def _inline(plan: Plan) -> tuple[str, str]:
    """``<think>`` prefix/suffix for servers without a reasoning parser."""
    opener = "<think>\n" if plan.family.open_tag_in_output else ""
    closer = "\n</think>\n\n" if plan.content_pieces or plan.tool_calls or (
        plan.finish_reason != "length") else ""
    return opener, closer


def _choice_extra(persona: Persona, choice: dict[str, Any], finish: str | None) -> None:
    if persona.finish_extra == "native_finish_reason":
        choice["native_finish_reason"] = finish
    elif persona.finish_extra == "stop_reason":
        choice["stop_reason"] = None


def render(persona: Persona, plan: Plan, body: dict[str, Any], no_choices: bool
           ) -> dict[str, Any]:
    content: str | None = plan.content
    message: dict[str, Any] = {"role": "assistant"}
    visible = _reasoning_visible(persona, plan, body)
    if visible and persona.reasoning_at == "inline":
        opener, closer = _inline(plan)
        content = f"{opener}{plan.reasoning}{closer}{plan.content}"
    elif visible:
        message[persona.reasoning_at] = plan.reasoning
        if persona.finish_extra == "native_finish_reason":  # OpenRouter also structures it
            message["reasoning_details"] = [
                {"type": "reasoning.text", "text": plan.reasoning, "format": "unknown",
                 "index": 0}
            ]
    if not content:
        if plan.tool_calls:
            content = persona.empty_with_tools
        elif plan.finish_reason == "length":
            content = persona.empty_on_length
    message["content"] = content
    if plan.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in plan.tool_calls
        ]
    choice = {"index": 0, "message": message, "logprobs": None,
              "finish_reason": plan.finish_reason}
    _choice_extra(persona, choice, plan.finish_reason)
    out: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids):012x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": plan.model,
        "choices": [] if no_choices else [choice],
    }
    usage = plan.usage(persona)
    if usage is not None:
        out["usage"] = usage
    return out


def stream(persona: Persona, plan: Plan, body: dict[str, Any], no_choices: bool
           ) -> Iterator[bytes]:
    opts = body.get("stream_options")
    include_usage = isinstance(opts, dict) and opts.get("include_usage") is True
    base: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids):012x}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": plan.model,
    }
    if include_usage:
        base["usage"] = None

    # Mid-stream chunks differ only in the delta: splice it between pre-serialised halves
    # so each token costs one tiny dumps (a 600-token reasoning stream stays cheap).
    head = b"data: " + orjson.dumps(base)[:-1] + b',"choices":[{"index":0,"delta":'
    tail = b',"logprobs":null,"finish_reason":null}]}\n\n'

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        if finish is None and delta:
            return head + orjson.dumps(delta) + tail
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        _choice_extra(persona, choice, finish)
        return b"data: " + orjson.dumps({**base, "choices": [choice]}) + b"\n\n"

    if no_choices:
        yield b"data: " + orjson.dumps(
            {**base, "choices": [], "usage": plan.usage(persona)}) + b"\n\n"
        yield b"data: [DONE]\n\n"
        return

    yield chunk({"role": "assistant", "content": ""})
    if _reasoning_visible(persona, plan, body):
        if persona.reasoning_at == "inline":
            opener, closer = _inline(plan)
            if opener:
                yield chunk({"content": opener})
            for p in pieces(plan.reasoning):
                yield chunk({"content": p})
            if closer:
                yield chunk({"content": closer})
        else:
            field = persona.reasoning_at
            details = persona.finish_extra == "native_finish_reason"
            for p in pieces(plan.reasoning):
                delta: dict[str, Any] = {field: p}
                if details:
                    delta["reasoning_details"] = [
                        {"type": "reasoning.text", "text": p, "format": "unknown", "index": 0}
                    ]
                yield chunk(delta)
    for p in plan.content_pieces:
        yield chunk({"content": p})
    for index, call in enumerate(plan.tool_calls):
        yield chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                     "function": {"name": call.name, "arguments": ""}}]})
        args = call.arguments
        for start in range(0, len(args), ARG_PIECE):
            yield chunk({"tool_calls": [
                {"index": index, "function": {"arguments": args[start:start + ARG_PIECE]}}]})
    yield chunk({}, plan.finish_reason)
    if include_usage:
        usage = plan.usage(persona)
        if usage is not None:
            yield b"data: " + orjson.dumps({**base, "choices": [], "usage": usage}) + b"\n\n"
    yield b"data: [DONE]\n\n"
