"""The NLU answer check: offered intents only, exactly the requested slots, typed values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest
from callout_server.tiers.nlu.validate import SchemaMismatch, coerce_slot, validate_answer


def node(**kw: object) -> DecideRequest:
    base: dict[str, object] = {
        "utterance": "明天下午三点以后都可以",
        "intents": [{"name": "agree", "description": "客户同意"}, {"name": "refuse"}],
        "slots": [
            {"name": "time", "type": "string"},
            {"name": "count", "type": "integer"},
            {"name": "price", "type": "number"},
            {"name": "installed", "type": "boolean"},
            {"name": "level", "type": "enum", "values": ["high", "low"]},
        ],
    }
    return DecideRequest.model_validate(base | kw)


def test_offered_intent_passes_with_typed_slots() -> None:
    intent, conf, slots = validate_answer(node(), {
        "intent": "agree", "confidence": 0.93,
        "slots": {"time": "明天下午三点以后", "count": "2", "price": "3.5", "installed": "是",
                  "level": "HIGH", "unrequested": "x"}})
    assert intent == "agree" and conf == 0.93
    assert slots == {"time": "明天下午三点以后", "count": 2, "price": 3.5, "installed": True,
                     "level": "high"}


def test_intent_outside_the_offered_names_is_never_passed_through() -> None:
    with pytest.raises(SchemaMismatch, match="not one of the offered"):
        validate_answer(node(), {"intent": "maybe", "slots": {}})
    with pytest.raises(SchemaMismatch):
        validate_answer(node(), {"slots": {}})


def test_no_intents_offered_means_intent_null() -> None:
    req = node(intents=[])
    assert validate_answer(req, {"intent": "agree", "slots": {"time": "now"}})[0] is None


def test_missing_and_uncoercible_slots_become_null() -> None:
    _, _, slots = validate_answer(node(), {"intent": "refuse", "slots": {
        "count": 2.5, "price": "about ten", "installed": "maybe", "level": "medium"}})
    assert slots == {"time": None, "count": None, "price": None, "installed": None, "level": None}


def test_slots_not_an_object_is_a_mismatch() -> None:
    with pytest.raises(SchemaMismatch):
        validate_answer(node(), {"intent": "agree", "slots": ["time"]})


@pytest.mark.parametrize(("raw", "expected"), [(1.7, 1.0), (-3, 0.0), ("0.5", 0.5), ("high", None),
                                               (None, None), (True, None)])
def test_confidence_is_clamped_or_null(raw: object, expected: float | None) -> None:
    assert validate_answer(node(), {"intent": "agree", "confidence": raw})[1] == expected


def test_string_slot_keeps_text_but_not_booleans() -> None:
    slot = node().slots[0]
    assert coerce_slot(slot, 12) == "12"
    assert coerce_slot(slot, True) is None
    assert coerce_slot(slot, "  ") is None


@pytest.mark.parametrize("overrides", [{"model": "x"}, {"stream": True}, {"top_k": 3}])
def test_overrides_outside_the_whitelist_are_rejected(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        node(overrides=overrides)


def test_extra_params_may_not_override_protected_keys() -> None:
    with pytest.raises(ValidationError, match="model"):
        node(overrides={"extra_params": {"model": "other"}})


def test_request_needs_intents_or_slots_and_a_known_fallback() -> None:
    with pytest.raises(ValidationError, match="intents"):
        node(intents=[], slots=[])
    with pytest.raises(ValidationError, match="fallback_intent"):
        node(fallback_intent="unknown")
    with pytest.raises(ValidationError, match="fallback_intent"):  # slots only: still a name
        node(intents=[], fallback_intent="a" * 65)
    with pytest.raises(ValidationError, match="fallback_intent"):
        node(intents=[], fallback_intent="two words")
    assert node(intents=[], fallback_intent="retry_node").fallback_intent == "retry_node"
    with pytest.raises(ValidationError, match="values"):
        node(slots=[{"name": "level", "type": "enum"}])


def test_prompt_lists_intents_slots_context_and_instructions() -> None:
    req = node(context=[{"role": "assistant", "content": "请问您什么时候方便？"}],
               instructions="只关心时间")
    system, user = build_messages(req)
    assert "- agree: 客户同意" in system["content"] and "- refuse" in system["content"]
    assert "level (枚举，取值 high | low)" in system["content"]
    assert "只关心时间" in system["content"]
    assert "坐席：请问您什么时候方便？" in user["content"]
    assert user["content"].endswith("客户最新的话：明天下午三点以后都可以")
