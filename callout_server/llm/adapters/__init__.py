"""API-style adapters: vendor JSON and stream chunks in, the closed event vocabulary out.

    adapter = make_adapter(cfg.api_style, cfg.model, dialect)  # the resolved dialect row
    events = adapter.parse(response_json)          # non-streamed: ends with Usage?, Finish
    events = adapter.feed(chunk_json)              # streamed, per `data:` payload
    events = adapter.close()                       # end of stream: flush, Usage?, Finish

The dialect row (`dialects.py`) is the adapters' only vendor knowledge: which fields carry
reasoning, and whether inline `<think>` may arrive in the answer text (with the model family
deciding whether its template pre-opened the tag). Adapters are pure (no I/O, no clock). Vendor failures reported inside a 200 response raise
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
from callout_server.llm.adapters.think import split_think
from callout_server.llm.dialects import FALLBACK, Dialect
from callout_server.llm.events import Event, Usage
from callout_server.llm.model_names import preopens_think


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


def make_adapter(api_style: str, model: str = "", dialect: Dialect = FALLBACK) -> Adapter:
    """A fresh adapter for one call in `dialect` (default: a self-hosted server)."""
    preopened = dialect.inline_think and preopens_think(model)
    return ADAPTERS[api_style](dialect, preopened_think=preopened)


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
