"""The record of one LLM call, as ops read it later: a value, made from a call's report by
`reports.to_record` and written by the recorder.

A record carries text a client or a vendor chose (call_id, node_id, an error message), and
PostgreSQL refuses some of it: a NUL byte, a lone UTF-16 surrogate (JSON `"\\ud800"`), a string
longer than its column. `CallRecord.clean()` makes every value storable once, when the record
is handed to the recorder, so one odd value can never fail a whole batch of inserts.

A diagnostic is stored as its code and numbers (`reason`, `reason_args`, `detail`), never
as finished text: `Diagnostic` words it when the record is read, in the reader's language.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import String

from callout_server.calllog.inputs import NluInputs, decision_json, request_json
from callout_server.calllog.models import LLMCallLog
from callout_server.db.base import utcnow
from callout_server.llm import Diagnostic
from callout_server.validation import storable

# Bounded so one pathological vendor message cannot bloat the log table.
MAX_TEXT = 2000

_INT32 = 2**31 - 1


def _text_limits() -> dict[str, int]:
    """Each text column's size in characters, from the table (Text columns: MAX_TEXT)."""
    limits = {}
    for column in LLMCallLog.__table__.columns:
        if isinstance(column.type, String):  # Text is a String without a length
            limits[column.name] = column.type.length or MAX_TEXT
    return limits


TEXT_LIMITS = _text_limits()
FLOAT_COLUMNS = ("latency_ms", "ttft_ms", "cost")
INT_COLUMNS = ("config_id", "prompt_tokens", "completion_tokens", "reasoning_tokens",
               "max_tokens", "status", "attempts", "key_id")


# Text columns whose values come from the configuration and from our own code (the tier, the
# source, the diagnostic code, the model, the dialect, the endpoint as shown), not from a
# caller or a vendor: `to_record` takes them cleaned once per configuration (`clean_static`)
# and marks the record (`static_clean`), so `clean()` walks only the rest.
STATIC_TEXT = ("tier", "source", "code", "model", "vendor", "endpoint")
_MAX_STATIC = 1024  # distinct combinations kept: configurations x tiers x codes, bounded
_static: dict[tuple[str | None, ...], tuple[str | None, ...]] = {}


def clean_static(*values: str | None) -> tuple[str | None, ...]:
    """The STATIC_TEXT values, in that order, made storable (a dict lookup once seen)."""
    hit = _static.get(values)
    if hit is None:
        if len(_static) >= _MAX_STATIC:
            _static.clear()
        hit = _static[values] = tuple(
            None if value is None else storable_text(value, TEXT_LIMITS[name])
            for name, value in zip(STATIC_TEXT, values, strict=True))
    return hit


def storable_text(value: object, limit: int) -> str:
    """`value` as text PostgreSQL takes: NUL and lone surrogates become U+FFFD, cut to `limit`."""
    text = storable(value if isinstance(value, str) else str(value))
    return text if len(text) <= limit else text[:limit]


def _finite(value: object) -> float | None:
    """NaN and ±Infinity are no latency: NULL (PostgreSQL would keep NaN, JSON cannot)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _json_scalar(value: object) -> str | int | float | None:
    """A reason's number as JSON keeps it: finite numbers, short storable text."""
    if isinstance(value, bool) or value is None:
        return None if value is None else int(value)
    if isinstance(value, int):
        return value if abs(value) < 2**53 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return storable_text(value, 200)


def _int32(value: object) -> int | None:
    """Integer columns are 32-bit: a vendor's absurd token count becomes NULL, not an error."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if -_INT32 - 1 <= value <= _INT32 else None


@dataclass(slots=True)
class CallRecord:
    tier: str
    code: str  # "ok" or a diagnostic code
    model: str | None = None
    vendor: str | None = None
    config_id: int | None = None
    message: str | None = None
    advice: str | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    max_tokens: int | None = None
    status: int | None = None
    call_id: str | None = None
    node_id: str | None = None
    endpoint: str | None = None  # the base URL that served the call (credentials masked)
    attempts: int | None = None  # requests the call took: 1 when nothing was retried/hedged
    at: datetime = field(default_factory=utcnow)
    id: int | None = None
    reason: str | None = None
    reason_args: dict[str, Any] | None = None
    detail: str | None = None
    # "evaluation": a shadow evaluation's replay; "playground": a console user's try-out;
    # "rule": the phrase rules answered (no model call). None of them is live traffic
    # (summary, metrics) and none keeps NLU inputs to replay.
    source: str = "live"
    # What redaction replaced ({kind: count}), set by the writer once it has redacted the
    # record (redact.py); None until then, and with `[privacy] redact = false`.
    redacted: dict[str, int] | None = None
    key_id: int | None = None  # the service key the caller authenticated with
    campaign: str | None = None  # that key's campaign
    cost: float | None = None  # the configuration's price applied to the tokens (None: unpriced)
    currency: str | None = None
    variant: str | None = None  # "active" | "canary" while a canary runs on the tier
    # What a chat run's speech guard and filler did: {"guard": {action: n}, "lexicons":
    # {name: n}, "filler": true}, counts only (tiers/chat/speech_notes.py); None: nothing.
    speech: dict[str, Any] | None = None
    # An NLU decision's inputs, on its last attempt's record (not a column: a row of
    # `nlu_call_inputs` written in the same transaction; see inputs.py)
    inputs: NluInputs | None = None
    # The `nlu_call_inputs` row, once the writer has built and redacted it (not a column)
    input_values: dict[str, Any] | None = None
    # Set by `to_record`: the STATIC_TEXT columns are clean already (not a column).
    static_clean: bool = field(default=False, repr=False, compare=False)
    # What the record holds in memory, estimated when it is queued (`held_bytes`): the
    # recorder's queue is bounded by the sum (not a column).
    held: int = field(default=0, repr=False, compare=False)

    @classmethod
    def from_diagnostic(cls, tier: str, diagnostic: Diagnostic | None, **fields: Any) -> CallRecord:
        """A record for a call that ended with `diagnostic` (None: success, code `ok`)."""
        if diagnostic is None:
            return cls(tier=tier, code="ok", **fields)
        numbers = {
            "finish_reason": diagnostic.finish_reason,
            "max_tokens": diagnostic.max_tokens,
            "prompt_tokens": diagnostic.prompt_tokens,
            "completion_tokens": diagnostic.completion_tokens,
            "reasoning_tokens": diagnostic.reasoning_tokens,
            "status": diagnostic.status,
        }
        merged = {k: v for k, v in numbers.items() if v is not None} | fields
        return cls(tier=tier, code=diagnostic.code, reason=diagnostic.reason,
                   reason_args=dict(diagnostic.args) if diagnostic.args else None,
                   detail=diagnostic.detail, **merged)

    def clean(self) -> CallRecord:
        """Make every value one the database accepts; the recorder calls it once per record.

        Text columns lose NUL bytes and lone surrogates (U+FFFD in their place) and are cut
        to their column's size; a float that is not finite, or an integer beyond 32 bits,
        becomes NULL. Returns the record itself.
        """
        for name, limit in (_DYNAMIC_LIMITS if self.static_clean else TEXT_LIMITS).items():
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, storable_text(value, limit))
        for name in FLOAT_COLUMNS:
            value = getattr(self, name)
            if value is not None and not (type(value) is float and math.isfinite(value)):
                setattr(self, name, _finite(value))
        for name in INT_COLUMNS:
            value = getattr(self, name)
            if value is not None and not (type(value) is int and -_INT32 - 1 <= value <= _INT32):
                setattr(self, name, _int32(value))
        if self.reason_args:
            self.reason_args = {storable_text(k, 40): _json_scalar(v)
                                for k, v in list(self.reason_args.items())[:8]}
        return self

    def row(self) -> dict[str, Any]:
        # Not dataclasses.asdict(): it deep-copies every value and cost ~20 µs a record,
        # paid ~1000 times a second by a busy worker's writer.
        return {name: getattr(self, name) for name in COLUMNS}

    def values(self) -> tuple[Any, ...]:
        """The row as a tuple in COLUMNS order (for PostgreSQL's COPY: JSON as its text)."""
        row = _COLUMN_VALUES(self)
        if self.reason_args is None and self.redacted is None and self.speech is None:
            return row  # type: ignore[no-any-return]
        out = list(row)
        for at, value in ((_REASON_ARGS, self.reason_args), (_REDACTED, self.redacted),
                          (_SPEECH, self.speech)):
            if value is not None:
                out[at] = orjson.dumps(value).decode()
        return tuple(out)

    def input_row(self) -> dict[str, Any] | None:
        """The `nlu_call_inputs` row of a record carrying inputs (built by the writer, off
        the request path); the two JSON values as text, which is what PostgreSQL's COPY takes."""
        values = self.input_tuple()
        return None if values is None else dict(zip(INPUT_COLUMNS, values, strict=True))

    def input_tuple(self) -> tuple[Any, ...] | None:
        """That row as a tuple in INPUT_COLUMNS order (what COPY takes), built directly: the
        one place its values are made."""
        inputs = self.inputs
        if inputs is None:
            return None
        head = (self.id, self.at, self.call_id, self.node_id, self.config_id, self.model)
        done = self.input_values
        if done is not None:  # built and redacted by the writer
            return (*head, done["inputs"], done["decision"], inputs.latency_ms, done["redacted"])
        return (*head, request_json(inputs.request), decision_json(inputs.decision),
                inputs.latency_ms, None)


# A queued record's memory, estimated from tracemalloc figures of Chinese NLU requests (the
# common case; ASCII text costs a fifth of it): a record alone ~0.5 KB, counted 1 KiB (an
# error's text columns add up to 2000 characters each), its inputs ~2 KB plus ~5 bytes a
# character (CPython keeps CJK text as UCS-2, and pydantic-core caches a UTF-8 copy in each
# string it validated) and ~0.6 KB an intent, slot or turn (a model and its dicts). Over the
# measured figure by 1-11 % from a 0.5 KB to a 70 KB request (JSON characters).
RECORD_BYTES = 1024
INPUTS_BYTES = 2048
CHAR_BYTES = 5
ITEM_BYTES = 640
VALUE_BYTES = 128  # an enum slot's value: a short string
_CONTENT = operator.attrgetter("content")
_DESCRIPTION = operator.attrgetter("description")
_VALUES = operator.attrgetter("values")


def held_bytes(rec: CallRecord) -> int:
    """An estimate of what `rec` holds in memory, for the queue's bound: the lengths of the
    request's texts and lists, summed in C (map/len: 2-5 µs for 20 intents and 10 turns, no
    serialisation); a request of another shape counts as an empty one."""
    inputs = rec.inputs
    if inputs is None:
        return RECORD_BYTES
    req = inputs.request
    context = getattr(req, "context", ())
    intents = getattr(req, "intents", ())
    slots = getattr(req, "slots", ())
    chars = (len(getattr(req, "utterance", "")) + len(getattr(req, "instructions", None) or "")
             + sum(map(len, map(_CONTENT, context))) + sum(map(len, map(_DESCRIPTION, intents)))
             + sum(map(len, map(_DESCRIPTION, slots))))
    values = sum(map(len, filter(None, map(_VALUES, slots)))) if slots else 0
    return (RECORD_BYTES + INPUTS_BYTES + CHAR_BYTES * chars
            + ITEM_BYTES * (len(context) + len(intents) + len(slots)) + VALUE_BYTES * values)


# Column names, in the table's order of the dataclass fields.
COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CallRecord)
                                 if f.name not in ("inputs", "input_values", "static_clean",
                                                   "held"))
_COLUMN_VALUES = operator.attrgetter(*COLUMNS)  # one C call for the whole row
_REASON_ARGS = COLUMNS.index("reason_args")
_REDACTED = COLUMNS.index("redacted")
_SPEECH = COLUMNS.index("speech")
_DYNAMIC_LIMITS = {name: limit for name, limit in TEXT_LIMITS.items()
                   if name not in STATIC_TEXT}
INPUT_COLUMNS = ("id", "at", "call_id", "node_id", "config_id", "model", "inputs", "decision",
                 "latency_ms", "redacted")
