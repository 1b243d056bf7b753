"""The bounds every request value passes before it is stored or sent upstream, in one place.

A request body model derives from `RequestModel`: its one field validator refuses NUL
characters in every string (PostgreSQL refuses them in text and JSONB, so a NUL that got
through would fail a write far from its cause) and bounds every JSON-valued field (a dict,
a list of plain values, an `Any`): depth, encoded size, finite numbers, integers that fit in
64 bits (what JSONB, orjson and the vendors all take). Nested models validate themselves.

    MAX_JSON_DEPTH   32 levels     MAX_JSON_BYTES   64 KB (encoded)

Query and path values are bounded by their route's types (`DbId`, `UtcDatetime`, ...) and a
NUL in them is refused at the edge (`api/limits.py`).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator

from callout_server.i18n import invalid

MAX_JSON_DEPTH = 32
MAX_JSON_BYTES = 64 * 1024
# JSONB, orjson and the vendors' parsers take signed and unsigned 64-bit integers.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1
# PostgreSQL integer columns: `version`, `revision`, counters (int4) and ids (int8).
INT4_MAX = 2**31 - 1
INT8_MAX = 2**63 - 1

REPLACEMENT = "\ufffd"
_SURROGATES = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(text: str) -> bool:
    if text.isascii():  # a flag, no scan; then encoding is the cheapest surrogate check
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def check_text(value: str) -> str:
    """Text PostgreSQL can store: no NUL and no lone UTF-16 surrogate (JSON `"\\ud800"`)."""
    if "\x00" in value:
        raise invalid("nul_character")
    if _has_lone_surrogate(value):
        raise invalid("lone_surrogate")
    return value


def storable(text: str) -> str:
    """Text that came from outside a request (a model's answer, a vendor's message) made
    storable: NUL and lone surrogates become U+FFFD, so the spot stays visible."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    if _has_lone_surrogate(text):
        text = _SURROGATES.sub(REPLACEMENT, text)
    return text


def check_json(value: Any, *, max_depth: int = MAX_JSON_DEPTH,
               max_bytes: int = MAX_JSON_BYTES) -> Any:
    """`value` if it is plain JSON that every store and vendor takes, else a ValueError
    (`invalid(code)`, which pydantic reports under that code).

    Iterative, so a hostile nesting cannot exhaust the stack while we look at it.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            check_text(item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not _INT_MIN <= item <= _INT_MAX:
                raise invalid("int_too_big")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise invalid("not_finite")
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise invalid("json_too_deep", max_depth=max_depth)
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise invalid("json_key_not_string")
                    check_text(key)
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)
        elif isinstance(item, BaseModel):
            continue  # a nested model validated its own fields
        else:
            raise invalid("not_json_value", kind=type(item).__name__)
    if isinstance(value, dict | list) and len(orjson.dumps(value, default=_nested)) > max_bytes:
        raise invalid("json_too_large", kb=max_bytes // 1024)
    return value


def _nested(_: object) -> None:
    return None  # a nested model is bounded by its own fields, not counted here


# A list of this many nested models encodes, as check_json counts it ("[null,null,...]"),
# within MAX_JSON_BYTES.
_MODELS_FIT = (MAX_JSON_BYTES - 2) // len("null,")


JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]


class RequestModel(BaseModel):
    """Base of every request body: unknown fields refused, strings and JSON values bounded."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        # Called for every field of every request: the common cases return without a call.
        kind = type(value)
        if kind is str:
            if "\x00" not in value and value.isascii():
                return value
            return check_text(value)
        if kind is list and len(value) <= _MODELS_FIT \
                and all(isinstance(item, BaseModel) for item in value):
            return value  # nested models bounded their own fields; depth 1, under the size
        if isinstance(value, str):
            return check_text(value)
        if isinstance(value, dict | list):
            return check_json(value)
        return value


def as_utc(value: datetime) -> datetime:
    """A filter time: naive means UTC; out-of-range offsets are a validation error."""
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError as exc:
        raise invalid("date_out_of_range") from exc


UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
