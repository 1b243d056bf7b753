"""Tests for `callout_server.llm.json_extract`: the corpus, then targeted points of the policy.

The hard requirement is zero wrong objects: every corpus case either returns exactly the
expected dict or fails with exactly the expected reason.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from callout_server.llm import json_extract
from callout_server.llm.json_extract import (
    EXCERPT_CHARS,
    REASONS,
    JSONExtractionError,
    extract_json_object,
)
from tests.data.json_corpus import CASES, Case


def _reason(text: str, **kwargs: Any) -> str:
    with pytest.raises(JSONExtractionError) as info:
        extract_json_object(text, **kwargs)
    return info.value.reason


# -- corpus ----------------------------------------------------------------------------------


def test_corpus_is_well_formed() -> None:
    assert len(CASES) >= 70
    assert len({case.id for case in CASES}) == len(CASES)
    for case in CASES:
        assert (case.expect is None) != (case.reason is None), case.id
        assert case.reason is None or case.reason in REASONS, case.id
    # Every reason is exercised, and both languages appear.
    assert {case.reason for case in CASES if case.reason} == REASONS
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in case.text) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_corpus_case(case: Case) -> None:
    if case.expect is not None:
        result = extract_json_object(case.text)
        assert result == case.expect
        # `==` says 1 == 1.0 == True; the answer must match in type too.
        assert json.dumps(result, sort_keys=True) == json.dumps(case.expect, sort_keys=True)
    else:
        assert _reason(case.text) == case.reason


# -- string contents and results -------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "明天下午三点以后",
        "a：b，c",
        "“curly” and ‘single’",
        "zero\u200bwidth\u3000space\xa0nbsp\ufeffbom",
        "**bold** // not a comment # nor this /* nor this */",
        '```json\n{"x": [1, 2]}\n```',
        '{"a": 1}, "b": 2}',
        "True None NaN ...",
        'tab\tnewline\nbackslash\\quote"',
    ],
)
def test_string_contents_unchanged(value: str) -> None:
    text = json.dumps({"reply": value}, ensure_ascii=False)
    assert extract_json_object(text) == {"reply": value}
    # The tolerant path (forced by a trailing comma) must not touch contents either.
    assert extract_json_object(text[:-1] + ",}") == {"reply": value}


def test_empty_object_is_a_result() -> None:
    assert extract_json_object("{}") == {}
    assert extract_json_object("```json\n{ }\n```") == {}


def test_literals_and_numbers_keep_their_types() -> None:
    result = extract_json_object("{'a': True, 'b': None, 'c': 1, 'd': 1.0, e: -2e-3,}")
    assert result == {"a": True, "b": None, "c": 1, "d": 1.0, "e": -0.002}
    assert type(result["c"]) is int and type(result["d"]) is float and result["a"] is True


def test_raw_newline_kept_literal_backslash_n_decoded() -> None:
    assert extract_json_object('{"r": "a\nb"}') == {"r": "a\nb"}
    assert extract_json_object('{"r": "a\\nb"}') == {"r": "a\nb"}


def test_name_arguments_not_unwrapped() -> None:
    text = '{"name": "f", "arguments": "{\\"intent\\": \\"agree\\"}"}'
    assert extract_json_object(text) == {"name": "f", "arguments": '{"intent": "agree"}'}


def test_curly_quotes_are_content_when_ascii_quotes_exist() -> None:
    # One ASCII quote anywhere means curly quotes are not delimiters: no guessing.
    assert _reason('{“intent”: “agree”, "x": 1}') == "unrepairable"


# -- reasoning -------------------------------------------------------------------------------


def test_reasoning_never_the_answer() -> None:
    assert _reason('<think>{"intent": "agree"}') == "in_reasoning"
    assert _reason('◁think▷{"intent": "agree"}') == "in_reasoning"
    assert extract_json_object('<think>{"a": 1}</think >{"a": 2}') == {"a": 2}


def test_cut_inside_a_think_tag_is_truncated() -> None:
    for cut in ("<", "<th", "<think", "</", "</thin", "◁", "◁thi", "◁/think"):
        assert _reason('{"intent": "agree"}' + cut) == "truncated", cut


def test_think_tag_inside_a_value_fails_rather_than_guessing() -> None:
    # The cut is textual (spec §1): a tag inside a string makes the answer unreadable, which is
    # a clear failure, never a different object.
    assert _reason('{"reply": "see </think> here"}') == "unrepairable"
    assert _reason('{"reply": "see <think> here"}') == "in_reasoning"


# -- failures --------------------------------------------------------------------------------


def test_error_is_value_error_with_bounded_excerpt() -> None:
    text = '{"reply": "' + "很长的内容" * 200
    with pytest.raises(ValueError) as info:
        extract_json_object(text)
    err = info.value
    assert isinstance(err, JSONExtractionError)
    assert err.reason == "truncated"
    assert len(err.excerpt) <= EXCERPT_CHARS
    assert err.excerpt.startswith('{"reply"') and err.excerpt.endswith("很长的内容")
    # The message explains in English and carries no model text (it may be call data).
    assert "cut off" in str(err) and "很长" not in str(err)


def test_the_extractor_says_what_the_text_shows_not_whether_it_was_cut() -> None:
    # Whether the output was cut is the client's verdict, judged once (classify.py); the
    # NLU tier reports it for a cut answer (tests/test_nlu_decide.py).
    assert _reason("我认为用户") == "empty"
    assert "finish_reason" not in inspect.signature(extract_json_object).parameters


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "b", "c": "d"}',
        '{"a": [1, {"b": null}], "c": "x"}',
        "{'a': 'b', c: [1, 2,],}",
    ],
)
def test_every_prefix_is_truncated_never_an_object(text: str) -> None:
    for end in range(1, len(text)):
        with pytest.raises(JSONExtractionError) as info:
            extract_json_object(text[:end])
        assert info.value.reason == "truncated", text[:end]


def test_deep_nesting_fails_cleanly() -> None:
    assert _reason("[" * 5000 + "]" * 5000) == "unrepairable"
    assert _reason("{'a': " * 200 + "1" + "}" * 200) == "unrepairable"


def test_public_surface() -> None:
    assert sorted(json_extract.__all__) == [
        "EXCERPT_CHARS",
        "JSONExtractionError",
        "REASONS",
        "extract_json_object",
    ]


def test_out_of_range_float_is_not_infinity() -> None:
    assert _reason('{"a": 1e999}') == "unrepairable"
    assert _reason("{'a': 1e999,}") == "unrepairable"


# A cut before the last closing tag can leave text that is, by itself, a complete answer
# (`<think>a</think>{"x": 1}`, or reasoning whose opening tag was in the prompt). Only
# `finish_reason` or a server-side reasoning parser can tell those apart.
_CUT_AMBIGUOUS_BY_NATURE = {"think_only_closing", "think_twice"}


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.expect is not None and c.id not in _CUT_AMBIGUOUS_BY_NATURE],
    ids=lambda c: c.id,
)
def test_any_cut_of_an_answer_is_never_another_object(case: Case) -> None:
    # Output cut at any character either fails or, when only trailing prose was lost,
    # still yields exactly the expected object.
    for end in range(len(case.text)):
        try:
            result = extract_json_object(case.text[:end])
        except JSONExtractionError:
            continue
        assert result == case.expect, case.text[:end]
