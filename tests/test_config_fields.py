"""A configuration field is written once (`ConfigValues`); every other shape must follow it."""

from __future__ import annotations

from dataclasses import fields

from callout_server.config.models import LLMConfigRow
from callout_server.config.schemas import (
    CALL_FIELDS,
    ROW_FIELDS,
    LLMConfigCreate,
    LLMConfigOut,
    LLMConfigUpdate,
)
from callout_server.config.tier_settings import LLMSection
from callout_server.llm import LLMConfig


def test_every_shape_carries_every_call_field() -> None:
    assert set(CALL_FIELDS) <= {f.name for f in fields(LLMConfig)}
    assert set(ROW_FIELDS) <= set(LLMConfigRow.__table__.columns.keys())
    for model in (LLMConfigCreate, LLMConfigUpdate, LLMConfigOut, LLMSection):
        assert set(CALL_FIELDS) <= set(model.model_fields), model.__name__


def test_update_fields_keep_their_bounds_and_mean_left_out_by_default() -> None:
    for name in CALL_FIELDS:
        create, update = LLMConfigCreate.model_fields[name], LLMConfigUpdate.model_fields[name]
        assert update.default is None and update.default_factory is None
        assert update.metadata == create.metadata, name  # same min/max/pattern


def test_update_refuses_explicit_null_for_a_required_field() -> None:
    import pytest
    from pydantic import ValidationError

    assert LLMConfigUpdate(version=1).changes() == {}
    with pytest.raises(ValidationError):
        LLMConfigUpdate(version=1, model=None)
    with pytest.raises(ValidationError):
        LLMConfigUpdate(version=1, max_tokens=0)
