"""The phrase book: every occurrence of many phrases, one automaton (phrases/matcher.py)."""

from __future__ import annotations

from callout_server.phrases import PhraseBook, normalize, parse
from callout_server.phrases.matcher import GAP


def spans(book: PhraseBook, text: str) -> list[tuple[str, str]]:
    norm = normalize(text)
    out = []
    for f in book.search(norm):
        start, end = norm.span(f.start, f.end)
        out.append((f.pattern.text, text[start:end]))
    return out


def test_overlapping_occurrences_are_all_found() -> None:
    book = PhraseBook([("a", "关机"), ("b", "机主"), ("c", "已关机")])
    assert spans(book, "已关机主") == [("已关机", "已关机"), ("关机", "关机"), ("机主", "机主")]


def test_a_phrase_is_folded_like_the_text() -> None:
    book = PhraseBook([("t", "穩賺")])
    assert spans(book, "稳 赚不赔") == [("穩賺", "稳 赚")]


def test_latin_words_stay_whole() -> None:
    book = PhraseBook([("t", "stop calling"), ("u", "complain")])
    assert spans(book, "Stop calling me") == [("stop calling", "Stop calling")]
    assert spans(book, "nonstop calling") == []
    assert spans(book, "I'm not complaining") == []
    assert spans(book, "我要complain") == [("complain", "complain")]  # a script change is an edge


def test_numbers_stay_whole() -> None:
    book = PhraseBook([("t", "12315")])
    assert spans(book, "打12315") == [("12315", "12315")]
    assert spans(book, "13812315678") == []
    assert spans(book, "138 1231 5678") == []


def test_no_match_across_a_clause_break() -> None:
    book = PhraseBook([("t", "保本")])
    assert spans(book, "保，本来就是") == []
    assert spans(book, "保 本") == [("保本", "保 本")]
    assert spans(book, "保-本") == [("保本", "保-本")]


def test_a_wildcard_spans_a_few_tokens_in_one_clause() -> None:
    book = PhraseBook([("t", "别再*打电话")], wildcards=True)
    assert spans(book, "别再打电话") == [("别再*打电话", "别再打电话")]
    assert spans(book, "别再往我家打电话") == [("别再*打电话", "别再往我家打电话")]
    assert spans(book, "别再" + "啊" * (GAP + 1) + "打电话") == []
    assert spans(book, "别再说了，我打电话给你") == []  # not across the comma


def test_a_wildcard_is_literal_without_wildcards() -> None:
    assert parse("a*b") == ("ab",)
    assert parse("a*b", wildcards=True) == ("a", "b")


def test_phrases_that_fold_to_nothing_are_set_aside() -> None:
    book = PhraseBook([("t", "！！"), ("t", "   "), ("t", "ok"), ("t", "a*？")], wildcards=True)
    assert [p.text for p in book.patterns] == ["ok"]
    assert book.ignored == [("t", "！！"), ("t", "   "), ("t", "a*？")]


def test_an_empty_book_finds_nothing() -> None:
    book = PhraseBook([])
    assert len(book) == 0
    assert book.search(normalize("任何话")) == []
