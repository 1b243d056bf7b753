"""What one call answered: the one place a call's events are collected and classified.

    answer = Answer()
    answer.add(event)                  # TextDelta | ReasoningDelta | ToolCall | Usage
    finish = answer.finish(end, max_tokens=..., thinking=..., locale=...)
    finish.diagnostic, finish.usable   # why it is not a clean answer; whether it is one at all

`LLMClient.complete()` feeds it a whole response's events; `LLMStream` feeds it each event
as its consumer receives it, so what the stream reports (`text`, `tool_calls`, `usage`) is
exactly what its consumer has seen. Both classify once, here (`classify.py`), and callers
read the verdict off the `Finish` event instead of judging the text again.
"""

from __future__ import annotations

from callout_server.llm.classify import classify, usable
from callout_server.llm.diagnostics import Locale
from callout_server.llm.events import Event, Finish, ReasoningDelta, TextDelta, ToolCall, Usage


class Answer:
    __slots__ = ("_reasoning", "_text", "tool_calls", "usage")

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.usage: Usage | None = None

    @property
    def text(self) -> str:
        """The answer so far (reasoning excluded)."""
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    def add(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, ToolCall):
            self.tool_calls.append(event)
        elif isinstance(event, Usage):
            self.usage = event

    def finish(self, end: Finish, *, max_tokens: int, thinking: bool | None,
               locale: Locale) -> Finish:
        """The adapter's `end` with the verdict on everything added: diagnostic, usable."""
        text, tools = self.text, len(self.tool_calls)
        diagnostic = classify(
            text=text,
            reasoning_seen=bool(self.reasoning.strip()),
            tool_calls=tools,
            finish_reason=end.reason,
            usage=self.usage,
            max_tokens=max_tokens,
            thinking=thinking,
            locale=locale,
        )
        return Finish(end.reason, diagnostic, end.extra,
                      usable=usable(diagnostic, text=text, tool_calls=tools))
