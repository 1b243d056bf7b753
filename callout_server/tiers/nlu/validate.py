"""Check a model's JSON answer against the node: offered intents only, typed slots.

Pure functions. An intent outside the offered names is a failure (`schema_mismatch`), never
passed through; a slot value that cannot be coerced to its type becomes null rather than
failing the whole decision, since the intent may still be right.
"""

from __future__ import annotations

import math
import re
from typing import Any

from callout_server.i18n import text
from callout_server.tiers.nlu.schemas import DecideRequest, Slot


class SchemaMismatch(ValueError):
    """The answer is valid JSON but not a decision for this node.

    `reason` and `args` say why (a diagnostic reason, rendered per language: the catalogue's
    `reason.<reason>`); `str()` is the English of it, for logs.
    """

    def __init__(self, reason: str, **args: Any) -> None:
        super().__init__(text(f"reason.{reason}", "en", **args))
        self.reason = reason
        self.values = args


_TRUE = {"true", "yes", "y", "1", "是", "对", "有", "同意", "需要"}
_FALSE = {"false", "no", "n", "0", "否", "不", "不是", "没有", "不同意", "不需要"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def _coerce_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if _NUMBER.match(text):
            return float(text)
    return None


def coerce_slot(slot: Slot, value: Any) -> Any:
    """The value as the slot's type, or None when it is missing or has no faithful reading."""
    if value is None:
        return None
    match slot.type:
        case "string":
            if isinstance(value, str):
                return value.strip() or None
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            return str(value)
        case "number":
            return _coerce_number(value)
        case "integer":
            number = _coerce_number(value)
            return int(number) if number is not None and number.is_integer() else None
        case "boolean":
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                text = value.strip().lower()
                return True if text in _TRUE else False if text in _FALSE else None
            return None
        case "enum":
            if not isinstance(value, str):
                return None
            allowed = slot.values or []
            if value in allowed:
                return value
            folded = [v for v in allowed if v.casefold() == value.strip().casefold()]
            return folded[0] if len(folded) == 1 else None
    return None


def _intent(req: DecideRequest, answer: dict[str, Any]) -> str | None:
    if not req.intents:
        return None
    raw = answer.get("intent")
    if not isinstance(raw, str) or not raw.strip():
        raise SchemaMismatch("intent_missing", value=repr(str(raw)[:60]))
    names = [i.name for i in req.intents]
    if raw in names:
        return raw
    folded = [n for n in names if n.casefold() == raw.strip().casefold()]
    if len(folded) == 1:
        return folded[0]
    # One string of the names (a reason's args are stored as scalars), as a reader writes them.
    raise SchemaMismatch("intent_not_offered", value=raw[:60], names=", ".join(names))


def _confidence(answer: dict[str, Any]) -> float | None:
    value = _coerce_number(answer.get("confidence"))
    return None if value is None else min(1.0, max(0.0, value))


def validate_answer(req: DecideRequest, answer: dict[str, Any]) -> tuple[str | None, float | None, dict[str, Any]]:
    """(intent, confidence, slots) for the node, or SchemaMismatch."""
    intent = _intent(req, answer)
    raw_slots = answer.get("slots", {})
    if raw_slots is None:
        raw_slots = {}
    if not isinstance(raw_slots, dict):
        raise SchemaMismatch("slots_not_object", kind=type(raw_slots).__name__)
    slots = {s.name: coerce_slot(s, raw_slots.get(s.name)) for s in req.slots}
    return intent, _confidence(answer), slots
