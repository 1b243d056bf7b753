"""The one text fold every phrase rule matches on (callout_server/phrases/normalize.py)."""

from __future__ import annotations

import importlib

import pytest

from callout_server.phrases import fold, normalize
from callout_server.phrases.normalize import CLAUSE, WORD
from tests.data.intent_corpus import CASES as NODE
from tests.data.screening_corpus import CASES as FIRST


@pytest.mark.parametrize(("text", "folded"), [
    ("ＳＯＲＲＹ！ｐｏｗｅｒ　ｏｆｆ", "sorrypoweroff"),  # full-width letters, marks, space
    ("ｶﾞｲﾄﾞ", "カイト"),  # half-width katakana (voicing marks fold away like accents)
    ("①②③", "123"),  # compatibility digits
    ("café / cafe\u0301", "cafecafe"),  # precomposed and combining accents alike
    ("Straße", "strasse"),  # case folding, not just lower()
    ("穩賺不賠", "稳赚不赔"),  # traditional -> simplified (OpenCC t2s)
    ("您撥打的電話已關機", "您拨打的电话已关机"),
    ("稳 赚", "稳赚"),  # spaces inside a term
    ("保-本", "保本"),  # marks inside a term
    ("保·本", "保本"),
    ("“转人工”！", "转人工"),  # quotes and punctuation
    ("don't", "dont"),
    ("\u200b零\u200d风险", "零风险"),  # zero-width characters
    ("😀🎉", ""),  # symbols only
    ("", ""),
])
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded
    assert normalize(text).text == folded


def test_traditional_is_folded_character_by_character() -> None:
    # OpenCC's phrase table would keep 乾 in 乾隆 and turn it into 干 in 乾淨; per character
    # both become 干, so a folded phrase is found in any text that holds it.
    assert fold("乾隆") == "干隆"
    assert fold("乾淨") == "干净"


def test_any_span_folds_like_the_whole() -> None:
    # What makes phrase matching sound: fold(text)[i:j] is fold of the matching original span.
    for case in (*FIRST, *NODE):
        norm = normalize(case.text)
        assert norm.text == fold(case.text)
        for i in range(len(norm.text)):
            for j in range(i + 1, min(len(norm.text), i + 6) + 1):
                start, end = norm.span(i, j)
                assert fold(case.text[start:end]) == norm.text[i:j], (case.text, i, j)


def test_span_maps_back_to_the_original() -> None:
    text = "这款产品，穩 賺不赔！"
    norm = normalize(text)
    i = norm.text.index("稳赚")
    assert norm.span(i, i + 2) == (5, 8)
    assert text[5:8] == "穩 賺"


def test_one_character_may_fold_to_several() -> None:
    norm = normalize("ß!")
    assert norm.text == "ss"
    assert norm.span(0, 2) == (0, 1)
    assert norm.span(1, 2) == (0, 1)


def test_separators_are_kept_between_characters() -> None:
    norm = normalize("不，我要 投诉")
    assert norm.text == "不我要投诉"
    assert norm.seps[1] == CLAUSE  # the comma
    assert norm.seps[3] == WORD  # the space
    assert norm.clause_break(0, 4)
    assert not norm.clause_break(1, 4)


def test_tokens_count_cjk_characters_and_latin_words() -> None:
    norm = normalize("I do not want 投诉")
    assert norm.tokens_between(0, len(norm.text)) == 6  # i do not want 投 诉
    assert normalize("don't").tokens_between(0, 4) == 1  # an apostrophe keeps the word whole


def test_edges_keep_words_and_numbers_whole() -> None:
    norm = normalize("nonstop calling")
    assert not norm.edges_ok(3, 7)  # "stop" inside "nonstop"
    assert normalize("stop calling").edges_ok(0, 4)
    phone = normalize("138 1231 5678")  # 12315 across the ASR's spaces is no 12315
    assert not phone.edges_ok(3, 8)
    assert normalize("打12315投诉").edges_ok(1, 6)


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("callout_server.phrases.normalize")  # the package's
    # `normalize` is the function
    monkeypatch.setattr(module, "_CACHE_LIMIT", 0)
    rare = "".join(chr(c) for c in range(0x1D400, 0x1D410))  # mathematical letters, uncached
    before = len(module._TABLE), len(module._CHARS)
    assert fold(rare) == normalize(rare).text == "abcdefghijklmnop"
    assert (len(module._TABLE), len(module._CHARS)) == before
