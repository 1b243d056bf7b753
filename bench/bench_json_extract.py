"""Benchmark JSON extraction over the test corpus: ours vs the naive extractor vs json_repair.

Run from the repository root:

    .venv/bin/python bench/bench_json_extract.py

Per algorithm it prints: correct (exact dict, or a failure where one is expected), wrong
objects (a dict that differs from the expected one, or any dict where a failure is expected:
the number that must be zero), clear failures, and the median microseconds per call over the
whole corpus and over the `typical` healthy answers, with ratios against the naive extractor.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

import json_repair

from callout_server.llm.json_extract import (
    JSONExtractionError,
    extract_json_object,
)
from tests.data.json_corpus import CASES, Case

Extractor = Callable[[str], Any]

RUNS = 7  # report the median of this many timed runs
RUN_SECONDS = 0.25  # rough wall time of one run, to pick the repetition count

_FENCE = re.compile(r"```(?:json)?\s*([\s\S]*?)```", re.I)


def naive(text: str) -> dict[str, Any]:
    """The algorithm we replace (seed 003 §4): fence, first `{` to last `}`, JSON.parse."""
    candidate = text.strip()
    m = _FENCE.search(candidate)
    if m is not None:
        candidate = m.group(1)
    start, end = candidate.find("{"), candidate.rfind("}")
    if start == -1 or end < start:
        raise ValueError("no object")
    value = json.loads(candidate[start : end + 1])
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def with_json_repair(text: str) -> Any:
    return json_repair.loads(text)


ALGORITHMS: dict[str, Extractor] = {
    "ours": extract_json_object,
    "naive": naive,
    "json_repair": with_json_repair,
}


@dataclass
class Score:
    correct: int = 0
    wrong: int = 0
    failed: int = 0
    reason_mismatch: int = 0  # ours only: failed as expected but with another reason
    wrong_ids: list[str] | None = None


def _same(a: Any, b: Any) -> bool:
    # Type-strict: 1, 1.0 and True are different answers.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def score(extract: Extractor, cases: tuple[Case, ...]) -> Score:
    result = Score(wrong_ids=[])
    for case in cases:
        reason: str | None = None
        try:
            value = extract(case.text)
        except JSONExtractionError as exc:
            value, reason = None, exc.reason
        except Exception:  # any exception is a clear failure here
            value = None
        if not isinstance(value, dict):
            result.failed += 1
            if case.expect is None:
                result.correct += 1
                if reason is not None and reason != case.reason:
                    result.reason_mismatch += 1
        elif case.expect is not None and _same(value, case.expect):
            result.correct += 1
        else:
            result.wrong += 1
            result.wrong_ids.append(case.id)  # type: ignore[union-attr]
    return result


def _one_pass(extract: Extractor, texts: list[str]) -> None:
    for text in texts:
        try:
            extract(text)
        except Exception:  # failures are part of the cost being timed
            pass


def median_us_per_call(extract: Extractor, texts: list[str]) -> float:
    start = time.perf_counter_ns()
    _one_pass(extract, texts)  # also warms caches and compiled regexes
    once = max(time.perf_counter_ns() - start, 1)
    reps = max(1, int(RUN_SECONDS * 1e9 / once))
    per_call: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter_ns()
        for _ in range(reps):
            _one_pass(extract, texts)
        elapsed = time.perf_counter_ns() - start
        per_call.append(elapsed / (reps * len(texts)) / 1000)
    return statistics.median(per_call)


def main() -> None:
    cases = CASES
    all_texts = [case.text for case in cases]
    typical = [case.text for case in cases if case.typical]
    expected_failures = sum(case.expect is None for case in cases)
    print(
        f"corpus: {len(cases)} cases ({len(cases) - expected_failures} objects, "
        f"{expected_failures} expected failures); typical subset: {len(typical)} cases, "
        f"{min(map(len, typical))}-{max(map(len, typical))} chars"
    )
    print(
        f"timing: median of {RUNS} runs, python {sys.version.split()[0]}, "
        f"json_repair {importlib.metadata.version('json_repair')}\n"
    )

    rows = []
    for name, extract in ALGORITHMS.items():
        s = score(extract, cases)
        rows.append(
            (name, s, median_us_per_call(extract, all_texts), median_us_per_call(extract, typical))
        )
    naive_all = next(r[2] for r in rows if r[0] == "naive")
    naive_typ = next(r[3] for r in rows if r[0] == "naive")

    header = (
        f"{'algorithm':<12} {'correct':>9} {'wrong obj':>9} {'failures':>9} "
        f"{'µs/call':>9} {'x naive':>8} {'µs typ.':>9} {'x naive':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, s, us_all, us_typ in rows:
        print(
            f"{name:<12} {s.correct:>5}/{len(cases):<3} {s.wrong:>9} {s.failed:>9} "
            f"{us_all:>9.2f} {us_all / naive_all:>7.1f}x {us_typ:>9.2f} "
            f"{us_typ / naive_typ:>7.1f}x"
        )
    print()
    for name, s, _, _ in rows:
        if s.wrong_ids:
            shown = ", ".join(s.wrong_ids[:12]) + (" …" if len(s.wrong_ids) > 12 else "")
            print(f"{name} wrong objects: {shown}")
        if name == "ours":
            print(f"ours: failures with a different reason than expected: {s.reason_mismatch}")


if __name__ == "__main__":
    main()
