"""Chat Completions (`/v1/chat/completions`) responses and stream chunks → events.

Where vendors put things (spec/vendors.md):
- answer: `message.content` / `delta.content` (a few servers send a list of text parts);
  `refusal` counts as answer text;
- reasoning: the fields the dialect row names (`Dialect.reasoning_fields`: DeepSeek,
  DashScope, SGLang, Kimi, GLM… `reasoning_content`; vLLM since PR #27752, OpenRouter, Ollama
  `reasoning`). During vLLM's rename both fields carried the same text, so only the first
  present one is read; inline `<think>` in content is split out where the row says it may
  come (`Dialect.inline_think`);
- tool calls: `tool_calls[i]` deltas keyed by `index`; names arrive once, arguments as string
  fragments. We emit each call once, complete, with a fresh call id;
- usage: a final chunk with `choices: []` (when `stream_options.include_usage` was sent), or
  repeated per chunk (vLLM continuous usage): the last one wins;
- finish_reason: kept exactly as the vendor sent it (`length`, `sensitive`, `load`…), None
  when absent. OpenRouter's `native_finish_reason` and vLLM's `stop_reason` go to `extra`.
"""

from __future__ import annotations

from typing import Any

import orjson

from callout_server.llm.adapters.common import (
    InBandError,
    ToolCallBuffer,
    error_detail,
    make_tool_call,
    parse_usage,
)
from callout_server.llm.adapters.think import ThinkSplitter, split_think
from callout_server.llm.dialects import FALLBACK, Dialect
from callout_server.llm.events import Event, Finish, ReasoningDelta, TextDelta, Usage

_EXTRA_FIELDS = ("native_finish_reason", "stop_reason")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"type": "text", "text": "..."}]
        return "".join(
            p.get("text") or ""
            for p in value
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _reasoning(container: dict[str, Any], fields: tuple[str, ...]) -> str:
    for key in fields:
        value = container.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _first_choice(obj: dict[str, Any]) -> dict[str, Any] | None:
    choices = obj.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None


def _raise_on_error(obj: dict[str, Any]) -> None:
    err = obj.get("error")
    if err:
        raise InBandError(error_detail(err))


class ChatCompletionsAdapter:
    """One adapter per call. `parse()` for a whole response; `feed()`…`close()` for a stream."""

    __slots__ = (
        "_emitted_tools",
        "_ids",
        "_inline",
        "_last_index",
        "_preopened",
        "_reasoning_fields",
        "_think",
        "_tools",
        "extra",
        "finish_reason",
        "finished",
        "saw_output",
        "usage",
    )

    def __init__(self, dialect: Dialect = FALLBACK, *, preopened_think: bool = False) -> None:
        self._reasoning_fields = dialect.reasoning_fields
        self._inline = dialect.inline_think
        self._preopened = preopened_think and self._inline
        self._think = ThinkSplitter(preopened=self._preopened, tags=self._inline)
        self._tools: dict[int, ToolCallBuffer] = {}
        self._ids: dict[str, int] = {}
        self._last_index = 0
        self._emitted_tools = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.extra: dict[str, Any] = {}
        self.saw_output = False  # any token (text, reasoning or tool call) arrived
        self.finished = False  # the vendor sent a finish_reason

    # -- non-streamed ---------------------------------------------------------------------

    def parse(self, obj: dict[str, Any]) -> list[Event]:
        _raise_on_error(obj)
        out: list[Event] = []
        choice = _first_choice(obj)
        if choice is not None:
            msg = choice.get("message")
            msg = msg if isinstance(msg, dict) else {}
            self._finish(choice)
            reasoning = _reasoning(msg, self._reasoning_fields)
            content = _text(msg.get("content"))
            inline, answer = split_think(
                content, preopened=self._preopened, truncated=self.finish_reason == "length"
            ) if self._inline else ("", content)
            # One block: the field's reasoning, then any inline reasoning in the content.
            block = "\n".join(part for part in (reasoning, inline) if part)
            if block:
                out.append(ReasoningDelta(block))
            if not answer:
                answer = _text(msg.get("refusal"))
            if answer:
                out.append(TextDelta(answer))
            for tc in msg.get("tool_calls") or ():
                if isinstance(tc, dict):
                    fn = tc.get("function")
                    fn = fn if isinstance(fn, dict) else {}
                    out.append(make_tool_call(str(fn.get("name") or ""), fn.get("arguments")))
            self.saw_output = bool(out)
        self.usage = parse_usage(obj.get("usage"))
        if self.usage is not None:
            out.append(self.usage)
        out.append(Finish(self.finish_reason, extra=self.extra))
        return out

    # -- streamed -------------------------------------------------------------------------

    def feed(self, obj: dict[str, Any]) -> list[Event]:
        """One `data:` chunk, already decoded. Never emits Usage or Finish (see `close`)."""
        _raise_on_error(obj)
        usage = obj.get("usage")
        if usage:
            self.usage = parse_usage(usage)
        choice = _first_choice(obj)
        if choice is None:
            return []
        out: list[Event] = []
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = _reasoning(delta, self._reasoning_fields)
            if reasoning:
                self.saw_output = True
                out.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if content:
                self.saw_output = True
                out.extend(self._think.feed(_text(content)))
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self.saw_output = True
                out.append(TextDelta(refusal))
            calls = delta.get("tool_calls")
            if calls:
                self.saw_output = True
                self._accumulate(calls)
        if choice.get("finish_reason"):
            self._finish(choice)
            out.extend(self._flush())
        return out

    def close(self) -> list[Event]:
        """End of stream: pending text, tool calls, then Usage and Finish."""
        out = self._flush()
        if self.usage is not None:
            out.append(self.usage)
        out.append(Finish(self.finish_reason, extra=self.extra))
        return out

    def _finish(self, choice: dict[str, Any]) -> None:
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            self.finished = True
        for key in _EXTRA_FIELDS:
            if choice.get(key) is not None:
                self.extra[key] = choice[key]

    def _flush(self) -> list[Event]:
        out: list[Event] = list(self._think.close(truncated=self.finish_reason == "length"))
        if not self._emitted_tools and self._tools:
            self._emitted_tools = True
            out.extend(self._tools[i].build() for i in sorted(self._tools))
        return out

    def _accumulate(self, calls: Any) -> None:
        if not isinstance(calls, list):
            return
        for tc in calls:
            if not isinstance(tc, dict):
                continue
            index = tc.get("index")
            call_id = tc.get("id")
            if not isinstance(index, int):
                # No index (a few gateways): a new id starts a new call, else continue the last.
                if isinstance(call_id, str) and call_id in self._ids:
                    index = self._ids[call_id]
                elif call_id or not self._tools:
                    index = len(self._tools)
                else:
                    index = self._last_index
            if isinstance(call_id, str) and call_id:
                self._ids.setdefault(call_id, index)
            self._last_index = index
            buf = self._tools.get(index)
            if buf is None:
                buf = self._tools[index] = ToolCallBuffer()
            fn = tc.get("function")
            if not isinstance(fn, dict):
                continue
            name = fn.get("name")
            if isinstance(name, str) and name and not buf.name:
                buf.name = name
            args = fn.get("arguments")
            if isinstance(args, str):
                buf.arguments.append(args)
            elif isinstance(args, dict):
                buf.arguments.append(orjson.dumps(args).decode())
