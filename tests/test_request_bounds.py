"""The bounds every request body passes (validation.RequestModel), field by field: each
refusal under its own code, at the field that broke it; the fast paths refuse what the full
checks refuse."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, ValidationError

from callout_server.validation import MAX_JSON_BYTES, RequestModel


class Item(RequestModel):
    name: str


class Body(RequestModel):
    text: str = ""
    items: list[Item] = Field(default_factory=list)
    words: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


def _refusal(**fields: Any) -> tuple[str, tuple[Any, ...]]:
    with pytest.raises(ValidationError) as info:
        Body.model_validate(fields)
    [error] = info.value.errors()
    return error["type"], error["loc"]


@pytest.mark.parametrize("text", ["plain", "中文，还有 emoji 🙂", "", "a" * 5000])
def test_storable_text_passes(text: str) -> None:
    assert Body.model_validate({"text": text}).text == text
    assert Body.model_validate_json(f'{{"text": "{text}"}}'.encode()).text == text


@pytest.mark.parametrize(("text", "code"), [
    ("a\x00b", "nul_character"), ("中\x00文", "nul_character"), ("\ud800", "lone_surrogate"),
    ("中文\udfff", "lone_surrogate"),
])
def test_unstorable_text_is_refused_at_its_field(text: str, code: str) -> None:
    assert _refusal(text=text) == (code, ("text",))
    assert _refusal(items=[{"name": text}]) == (code, ("items", 0, "name"))
    assert _refusal(words=["ok", text]) == (code, ("words",))


def test_a_list_of_models_is_bounded_like_any_json_value() -> None:
    fits = (MAX_JSON_BYTES - 2) // len("null,")
    assert len(Body.model_validate({"items": [{"name": "x"}] * fits}).items) == fits
    assert _refusal(items=[{"name": "x"}] * (fits + 2)) == ("json_too_large", ("items",))


@pytest.mark.parametrize(("extra", "code"), [
    ({"x": float("nan")}, "not_finite"), ({"x": 2**70}, "int_too_big"),
    ({"x": "a\x00"}, "nul_character"), ({"a\x00": 1}, "nul_character"),
])
def test_json_values_are_checked_inside(extra: dict[str, Any], code: str) -> None:
    assert _refusal(extra=extra) == (code, ("extra",))
