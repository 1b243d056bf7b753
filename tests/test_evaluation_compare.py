"""The comparison's pure core: agreement of one call, and the summary of many."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from callout_server.evaluation.compare import compare, normal, same_slots
from callout_server.evaluation.summary import BUCKETS_MS, percentile, summarize


def agree(**kw: Any) -> tuple[bool | None, bool | None, bool]:
    fields = {"intents_offered": True, "slots_asked": True, "recorded_intent": "agree",
              "recorded_slots": {"time": "明天"}, "candidate_intent": "agree",
              "candidate_slots": {"time": "明天"}, "candidate_decided": True} | kw
    a = compare(**fields)
    return a.intent, a.slots, a.agrees


def test_one_call() -> None:
    assert agree() == (True, True, True)
    assert agree(candidate_intent="refuse") == (False, True, False)
    assert agree(candidate_slots={"time": "后天"}) == (True, False, False)
    # nothing offered, nothing compared: agreement is not claimed where nothing was asked
    assert agree(intents_offered=False, recorded_intent=None, candidate_intent=None) == (
        None, True, True)
    assert agree(slots_asked=False, candidate_slots={}) == (True, None, True)
    # a candidate that failed with no fallback intent decided nothing: it disagrees
    assert agree(candidate_intent=None, candidate_slots=None, candidate_decided=False) == (
        False, False, False)
    # its fallback is no decision either, even when it names the recorded intent ...
    refuse = {"recorded_intent": "refuse", "recorded_slots": {"time": None},
              "candidate_intent": "refuse", "candidate_slots": {"time": None}}
    assert agree(**refuse, candidate_fallback=True) == (False, False, False)
    # ... except beside a recorded fallback: the dialer got the same answer both times
    assert agree(**refuse, candidate_fallback=True, recorded_fallback=True) == (True, True, True)
    # a recorded fallback is compared as what the dialer got
    assert agree(**refuse, recorded_fallback=True) == (True, True, True)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("明天 下午", "明天  下午 ", True),       # runs of whitespace, ends
    ("ＡＢＣ１２３", "abc123", True),         # NFKC full-width, case folded
    ("明天下午", "明天 下午", False),         # a space is not nothing
    (3, 3.0, True), (3, "3", False), (True, 1, False), (None, None, True), (None, "", False),
    ("yes", True, False),
])
def test_slot_values(a: Any, b: Any, same: bool) -> None:
    assert (normal(a) == normal(b)) is same
    assert same_slots({"x": a}, {"x": b}) is same


def test_slot_sets() -> None:
    assert same_slots({"a": 1, "b": None}, {"a": 1})  # a missing slot is an unfilled one
    assert not same_slots({"a": 1}, {"a": 1, "b": "x"})
    assert same_slots(None, None) and not same_slots({"a": None}, None)


@dataclass
class Row:
    node_id: str | None
    agrees: bool
    intent_agrees: bool | None
    slots_agree: bool | None
    candidate_latency_ms: float | None = 100.0
    recorded_latency_ms: float | None = 40.0
    candidate_code: str = "ok"
    recorded_code: str = "ok"
    candidate_fallback: bool = False
    recorded_fallback: bool = False
    prompt_tokens: int | None = 200
    completion_tokens: int | None = 20
    reasoning_tokens: int | None = None


def test_summary() -> None:
    rows = [Row("a", True, True, True, candidate_latency_ms=float(i)) for i in range(1, 9)] + [
        Row("b", False, False, None, candidate_code="deadline_exceeded", candidate_fallback=True,
            candidate_latency_ms=6000.0),
        Row("b", False, True, False, recorded_code="timeout", recorded_fallback=True)]
    s = summarize(rows, skipped=2)
    assert (s["calls"], s["agreeing"], s["skipped"]) == (10, 8, 2)
    assert (s["intent_agreement"], s["slot_agreement"]) == (0.9, round(8 / 9, 4))
    assert s["candidate"]["codes"] == {"ok": 9, "deadline_exceeded": 1}
    assert s["candidate"]["fallbacks"] == 1 and s["recorded"]["fallbacks"] == 1
    assert s["recorded"]["codes"] == {"ok": 9, "timeout": 1}
    assert s["candidate"]["tokens"] == {"prompt_tokens": 2000, "completion_tokens": 200,
                                        "reasoning_tokens": 0}
    assert "tokens" not in s["recorded"]
    assert s["recorded"]["p50_ms"] == 40.0 and s["recorded"]["p95_ms"] == 40.0
    assert [n["node_id"] for n in s["by_node"]] == ["a", "b"]  # most calls first
    b = s["by_node"][1]
    assert (b["calls"], b["intent_agreement"], b["slot_agreement"]) == (2, 0.5, 0.0)
    hist = s["latency_histogram"]
    assert hist["bounds_ms"] == list(BUCKETS_MS)
    assert hist["candidate"][0] == 8 and hist["candidate"][-1] == 1  # ≤50 ms, and > 5 s
    assert sum(hist["recorded"]) == 10


def test_empty_and_percentiles() -> None:
    s = summarize([])
    assert s["intent_agreement"] is None and s["candidate"]["p50_ms"] is None
    assert s["by_node"] == []
    assert percentile([5.0], 95) == 5.0
    assert percentile([float(v) for v in range(1, 101)], 50) == 50.5


def test_global_intents() -> None:
    # the same global intent named on both sides: agreement (the node intents agree too)
    assert agree(recorded_global="opt_out", candidate_global="opt_out") == (True, True, True)
    # named on one side only, or a different one: the intent disagrees
    assert agree(recorded_global="opt_out") == (False, True, False)
    assert agree(candidate_global="opt_out") == (False, True, False)
    assert agree(recorded_global="opt_out", candidate_global="complaint")[0] is False
    # the same global intent but another node intent: still a disagreement
    assert agree(recorded_global="opt_out", candidate_global="opt_out",
                 candidate_intent="refuse")[0] is False
    # compared even at a node that offered no intents (slots only)
    assert agree(intents_offered=False, recorded_intent=None, candidate_intent=None,
                 recorded_global="human_agent")[0] is False
    assert agree(intents_offered=False, recorded_intent=None, candidate_intent=None,
                 recorded_global="human_agent", candidate_global="human_agent")[0] is True
    # a candidate that decided nothing disagrees with a recorded global intent
    assert agree(recorded_global="opt_out", candidate_decided=False)[0] is False
