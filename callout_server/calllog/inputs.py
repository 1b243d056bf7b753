"""NLU inputs kept with the call log, for shadow evaluation.

Each NLU decision's inputs (utterance, context, intents, slots, instructions, fallback
intent, overrides, deadline, a node's opting out of global intents) and its decision are customers' words: they are kept only for
`[calllog] nlu_inputs_days` (default 7, `0` keeps none) and purged with the log.

The request path hands over `NluInputs` on the decision's last call-log record and does no
other work: the request model is only referenced, and the background writer turns it into
a row (`CallRecord.input_row`) when it writes the batch. Every string is made storable there with
`storable()` (PostgreSQL refuses NUL in JSONB): the model's slot values always, the request
only when its JSON shows a NUL or a lone surrogate (request bodies are refused with those
at the edge, so that is the rare path; the common one costs one `model_dump_json`, ~13 µs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from callout_server.validation import storable

# What a replay needs to send the same prompt again (the request's other fields, call_id
# and node_id, have their own columns).
# `global_intents` is kept when a node opted out (false), so its replay opts out too.
INPUT_FIELDS = frozenset({"utterance", "context", "intents", "slots", "instructions",
                          "fallback_intent", "overrides", "deadline_ms", "global_intents"})


class RequestModel(Protocol):
    """A pydantic request (the NLU tier's `DecideRequest`), dumped by the writer."""

    def model_dump(self, *, mode: str, include: set[str] | frozenset[str],
                   exclude_defaults: bool) -> dict[str, Any]: ...

    def model_dump_json(self, *, include: set[str] | frozenset[str],
                        exclude_defaults: bool) -> str: ...


@dataclass(slots=True, frozen=True)
class NluInputs:
    request: RequestModel
    # {"intent", "slots", "fallback", "code", "confidence"}, and "global_intent" (a name)
    # when the model named one: what the dialer was answered
    decision: dict[str, Any]
    latency_ms: float  # the whole decision, retry included


def storable_json(value: Any) -> Any:
    """`value` with every string (keys too) made storable: NUL and lone surrogates -> U+FFFD."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(str(k)): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(v) for v in value]
    return value


def decision_json(decision: dict[str, Any]) -> str:
    """The decision as JSON text, every string storable: encoded once when it holds no NUL
    (orjson refuses a lone surrogate, and `\\u0000` shows a NUL, maybe falsely: then the
    slow way), which is every decision but a rare model's."""
    try:
        text: bytes | None = orjson.dumps(decision)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, a key that is no string
        text = None
    if text is None or b"\\u0000" in text:
        return orjson.dumps(storable_json(decision)).decode()
    return text.decode()


def request_json(request: RequestModel) -> str:
    """The request's replayable fields as JSON text, every string storable."""
    try:
        text = request.model_dump_json(include=INPUT_FIELDS, exclude_defaults=True)
    except ValueError:  # a lone surrogate cannot be encoded
        text = None
    if text is None or "\\u0000" in text:
        dumped = request.model_dump(mode="json", include=INPUT_FIELDS, exclude_defaults=True)
        return orjson.dumps(storable_json(dumped)).decode()
    return text
