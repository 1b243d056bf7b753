"""The exact public surface of `callout_server.llm`: every module outside the package imports
only these (the `llm-surface` import contract in pyproject.toml)."""

from __future__ import annotations

import importlib
from typing import get_args

import callout_server.llm as llm

EXPECTED = {
    "DIALECTS",
    "MASK",
    "PROTECTED_BODY_KEYS",
    "RETRY_AFTER_MAX_S",
    "TIER_PRIORITY",
    "ApiStyle",
    "Completion",
    "Diagnostic",
    "Dialect",
    "Endpoint",
    "Event",
    "Finish",
    "JSONExtractionError",
    "LLMCallError",
    "LLMClient",
    "LLMConfig",
    "Price",
    "LLMRequest",
    "LLMStream",
    "Locale",
    "PoolLimits",
    "ReasoningDelta",
    "Refusal",
    "SentenceBatcher",
    "TargetPolicy",
    "TextDelta",
    "TimeLimit",
    "ToolCall",
    "Usage",
    "check_api_key",
    "check_no_url_credentials",
    "effective_thinking",
    "extract_json_object",
    "has_url_credentials",
    "join_sentences",
    "mask_api_key",
    "mask_url",
    "resolve_dialect",
    "same_origin",
    "speakable",
    "time_limit",
    "time_limit_at",
}
# Values rather than classes or functions: checked to be the package's own objects.
CONSTANTS = {"MASK": "masking", "PROTECTED_BODY_KEYS": "config", "TIER_PRIORITY": "config",
             "RETRY_AFTER_MAX_S": "transport",
             "ApiStyle": "config",
             "Locale": "diagnostics"}


def test_all_is_exact() -> None:
    assert set(llm.__all__) == EXPECTED
    assert len(llm.__all__) == len(EXPECTED)


def test_every_name_resolves_and_belongs_to_the_package() -> None:
    for name in llm.__all__:
        member = getattr(llm, name)
        if name == "DIALECTS":  # the vendor rows, read-only, by name
            assert all(isinstance(row, llm.Dialect) for row in member.values())
            continue
        if name == "Event":  # a union alias of the five event types
            assert set(get_args(member)) == {
                llm.TextDelta,
                llm.ReasoningDelta,
                llm.ToolCall,
                llm.Usage,
                llm.Finish,
            }
            continue
        if name in CONSTANTS:
            home = importlib.import_module(f"callout_server.llm.{CONSTANTS[name]}")
            assert getattr(home, name) is member, name
            continue
        module = getattr(member, "__module__", "")
        assert module.startswith("callout_server."), (name, module)


def test_unknown_name_raises_attribute_error() -> None:
    try:
        llm.does_not_exist  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
