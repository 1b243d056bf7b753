"""API-style adapters: vendor JSON and stream chunks in, the closed event vocabulary out.

    adapter = make_adapter(cfg.api_style, cfg.model)
    events = adapter.parse(response_json)          # non-streamed: ends with Usage?, Finish
    events = adapter.feed(chunk_json)              # streamed, per `data:` payload
    events = adapter.close()                       # end of stream: flush, Usage?, Finish

Adapters are pure (no I/O, no clock). Vendor failures reported inside a 200 response raise
`InBandError`; the client turns that into `LLMCallError` at its one translation point. The
`Finish` an adapter emits carries no diagnostic: classification is `classify.py`'s job.
"""

from __future__ import annotations

from typing import Any, Protocol

from callout_server.llm.adapters.chat_completions import ChatCompletionsAdapter
from callout_server.llm.adapters.common import (
    InBandError,
    MalformedPayload,
    tool_call_arguments_valid,
)
from callout_server.llm.adapters.responses import ResponsesAdapter
from callout_server.llm.adapters.think import model_preopens_think, split_think
from callout_server.llm.events import Event, Usage


class Adapter(Protocol):
    finish_reason: str | None
    usage: Usage | None
    extra: dict[str, Any]
    saw_output: bool
    finished: bool

    def parse(self, obj: dict[str, Any]) -> list[Event]: ...
    def feed(self, obj: dict[str, Any]) -> list[Event]: ...
    def close(self) -> list[Event]: ...


ADAPTERS: dict[str, type[ChatCompletionsAdapter] | type[ResponsesAdapter]] = {
    "chat-completions": ChatCompletionsAdapter,
    "responses": ResponsesAdapter,
}


def make_adapter(api_style: str, model: str = "") -> Adapter:
    return ADAPTERS[api_style](preopened_think=model_preopens_think(model))


__all__ = [
    "ADAPTERS",
    "Adapter",
    "ChatCompletionsAdapter",
    "InBandError",
    "MalformedPayload",
    "ResponsesAdapter",
    "make_adapter",
    "split_think",
    "tool_call_arguments_valid",
]
