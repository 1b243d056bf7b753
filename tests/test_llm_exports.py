"""The exact public surface of `callout_server.llm`: tiers and routes import only these."""

from __future__ import annotations

from typing import get_args

import callout_server.llm as llm

EXPECTED = {
    "DIALECTS",
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
    "LLMRequest",
    "LLMStream",
    "PoolLimits",
    "ReasoningDelta",
    "Refusal",
    "TargetPolicy",
    "TextDelta",
    "ToolCall",
    "Usage",
    "effective_thinking",
    "extract_json_object",
    "resolve_dialect",
}


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
        module = getattr(member, "__module__", "")
        assert module.startswith("callout_server."), (name, module)


def test_unknown_name_raises_attribute_error() -> None:
    try:
        llm.does_not_exist  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
