"""Responses API (`/v1/responses`) responses and stream events → events.

Non-streamed: `output` is a list of items — `message` (content parts `output_text` or
`refusal`), `reasoning` (`summary[].text`, `content[].text`), `function_call` (`name`,
`arguments` string). Streamed: typed events (`response.output_text.delta`,
`response.reasoning_summary_text.delta`, `response.function_call_arguments.delta`,
`response.output_item.done`, `response.completed`…).

The style has no finish_reason, so one is derived for the rest of the system: `completed` →
`stop` (or `tool_calls` when the model called a function), `incomplete` with reason
`max_output_tokens` → `length`, any other incomplete reason as given (`content_filter`).
`response.failed` and `error` events are vendor failures (InBandError). Reasoning items are
the style's own; inline `<think>` in output text is split out where the dialect row says it
may come (`Dialect.inline_think`: self-hosted servers without a reasoning parser).
"""

from __future__ import annotations

from typing import Any

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

_TEXT_DELTAS = frozenset({"response.output_text.delta", "response.refusal.delta"})
_REASONING_DELTAS = frozenset(
    {
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning.delta",  # early/third-party servers
    }
)
_TERMINAL = frozenset({"response.completed", "response.incomplete"})
_INCOMPLETE_REASONS = {"max_output_tokens": "length"}


class ResponsesAdapter:
    """One adapter per call. `parse()` for a whole response; `feed()`…`close()` for a stream."""

    __slots__ = (
        "_calls",
        "_inline",
        "_preopened",
        "_think",
        "called_tool",
        "extra",
        "finish_reason",
        "finished",
        "saw_output",
        "usage",
    )

    def __init__(self, dialect: Dialect = FALLBACK, *, preopened_think: bool = False) -> None:
        self._inline = dialect.inline_think
        self._preopened = preopened_think and self._inline
        self._think = ThinkSplitter(preopened=self._preopened, tags=self._inline)
        self._calls: dict[str, ToolCallBuffer] = {}  # by item id (or output_index)
        self.called_tool = False
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.extra: dict[str, Any] = {}
        self.saw_output = False
        self.finished = False

    # -- non-streamed ---------------------------------------------------------------------

    def parse(self, obj: dict[str, Any]) -> list[Event]:
        if obj.get("status") == "failed" or (obj.get("error") and not obj.get("output")):
            raise InBandError(error_detail(obj.get("error") or "response failed"))
        self._terminal(obj)
        out: list[Event] = []
        reasoning: list[str] = []
        text: list[str] = []
        for item in obj.get("output") or ():
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content") or ():
                    if isinstance(part, dict):
                        value = (
                            part.get("text")
                            if part.get("type") != "refusal"
                            else part.get("refusal")
                        )
                        if isinstance(value, str):
                            text.append(value)
            elif kind == "reasoning":
                for key in ("summary", "content"):
                    for part in item.get(key) or ():
                        if isinstance(part, dict) and isinstance(part.get("text"), str):
                            reasoning.append(part["text"])
            elif kind == "function_call":
                self.called_tool = True
                out.append(make_tool_call(str(item.get("name") or ""), item.get("arguments")))
        content = "".join(text)
        inline, answer = split_think(
            content, preopened=self._preopened, truncated=self.finish_reason == "length"
        ) if self._inline else ("", content)
        head: list[Event] = []
        # One block: the reasoning items, then any inline reasoning in the text.
        block = "\n".join([*reasoning, inline] if inline else reasoning)
        if block:
            head.append(ReasoningDelta(block))
        if answer:
            head.append(TextDelta(answer))
        out = head + out
        self.saw_output = bool(out)
        if self.called_tool and self.finish_reason == "stop":
            self.finish_reason = "tool_calls"
        if self.usage is not None:
            out.append(self.usage)
        out.append(Finish(self.finish_reason, extra=self.extra))
        return out

    # -- streamed -------------------------------------------------------------------------

    def feed(self, obj: dict[str, Any]) -> list[Event]:
        kind = obj.get("type")
        if kind in _TEXT_DELTAS:
            delta = obj.get("delta")
            if isinstance(delta, str) and delta:
                self.saw_output = True
                if kind == "response.refusal.delta":
                    return [TextDelta(delta)]
                return list(self._think.feed(delta))
            return []
        if kind in _REASONING_DELTAS:
            delta = obj.get("delta")
            if isinstance(delta, str) and delta:
                self.saw_output = True
                return [ReasoningDelta(delta)]
            return []
        if kind == "response.output_item.added":
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                self.saw_output = True
                self._calls[self._key(obj, item)] = ToolCallBuffer(str(item.get("name") or ""))
            return []
        if kind == "response.function_call_arguments.delta":
            buf = self._buffer(obj)
            delta = obj.get("delta")
            if isinstance(delta, str):
                self.saw_output = True
                buf.arguments.append(delta)
            return []
        if kind == "response.function_call_arguments.done":
            args = obj.get("arguments")
            if isinstance(args, str):  # authoritative full text
                self._buffer(obj).arguments = [args]
            return []
        if kind == "response.output_item.done":
            return self._item_done(obj)
        if kind in _TERMINAL:
            response = obj.get("response")
            self._terminal(response if isinstance(response, dict) else {})
            return []
        if kind == "response.failed":
            response = obj.get("response")
            err = response.get("error") if isinstance(response, dict) else None
            raise InBandError(error_detail(err or "response failed"))
        if kind == "error":
            raise InBandError(error_detail(obj.get("error") or obj))
        return []  # created, in_progress, content_part.*, *.done texts: nothing new

    def close(self) -> list[Event]:
        out: list[Event] = list(self._think.close(truncated=self.finish_reason == "length"))
        for buf in self._calls.values():
            if not buf.done:  # the stream ended before output_item.done
                self.called_tool = True
                out.append(buf.build())
        if self.called_tool and self.finish_reason == "stop":
            self.finish_reason = "tool_calls"
        if self.usage is not None:
            out.append(self.usage)
        out.append(Finish(self.finish_reason, extra=self.extra))
        return out

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def _key(obj: dict[str, Any], item: dict[str, Any] | None = None) -> str:
        item_id = (item or {}).get("id") or obj.get("item_id")
        return str(item_id) if item_id else f"#{obj.get('output_index', 0)}"

    def _buffer(self, obj: dict[str, Any]) -> ToolCallBuffer:
        key = self._key(obj)
        buf = self._calls.get(key)
        if buf is None:
            # Delta for an item we have not seen announced: match it by output_index.
            buf = self._calls.get(f"#{obj.get('output_index', 0)}")
            if buf is None:
                buf = self._calls[key] = ToolCallBuffer()
        return buf

    def _item_done(self, obj: dict[str, Any]) -> list[Event]:
        item = obj.get("item")
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return []
        buf = self._calls.pop(self._key(obj, item), None) or ToolCallBuffer()
        name = item.get("name")
        if isinstance(name, str) and name:
            buf.name = name
        if isinstance(item.get("arguments"), str):
            buf.arguments = [item["arguments"]]
        self.called_tool = True
        return [buf.build()]

    def _terminal(self, response: dict[str, Any]) -> None:
        status = response.get("status")
        if status is not None:
            self.extra["status"] = status
        if status == "completed":
            self.finish_reason = "stop"
        elif status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            if not isinstance(reason, str) or not reason:  # an object, a list: no reason
                reason = "incomplete"  # (as a set member it raised, and the stream died)
            self.finish_reason = _INCOMPLETE_REASONS.get(reason, reason)
        self.finished = status is not None
        usage = parse_usage(response.get("usage"))
        if usage is not None:
            self.usage = usage
