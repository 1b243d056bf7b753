"""Lexicon matching for speech guards (phrases/lexicon.py): terms, allowed look-alikes, the
hit's span in the sentence, and the cost of a 10,000-term lexicon."""

from __future__ import annotations

import random
import statistics
import time

import pytest

from callout_server.phrases import Lexicon, LexiconHit

FINANCE = Lexicon(["保本", "稳赚", "零风险", "保证收益", "guaranteed return"],
                  allow=["确保本月", "担保本金"])


@pytest.mark.parametrize(("sentence", "said"), [
    ("这款产品保本保息。", "保本"),
    ("这款产品稳 赚不赔。", "稳 赚"),  # a space inside the term
    ("这款产品保-本。", "保-本"),  # a mark inside the term
    ("這款產品穩賺不賠。", "穩賺"),  # traditional
    ("完全０风险？不，是零風險。", "零風險"),
    ("ＧＵＡＲＡＮＴＥＥＤ　ＲＥＴＵＲＮ of 5%", "ＧＵＡＲＡＮＴＥＥＤ　ＲＥＴＵＲＮ"),  # full-width, case
    ("A Guaranteed-Return plan", "Guaranteed-Return"),
    ("我们保证收益稳定", "保证收益"),
])
def test_a_term_is_found_however_it_is_written(sentence: str, said: str) -> None:
    hit = FINANCE.check(sentence)
    assert hit is not None
    assert hit.text == said
    assert sentence[hit.start:hit.end] == said


def test_the_hit_names_the_term_as_listed() -> None:
    assert FINANCE.check("穩 賺") == LexiconHit("稳赚", 0, 3, "穩 賺")


@pytest.mark.parametrize("sentence", [
    "我们会确保本月到账。",
    "这笔贷款需要担保本金。",
    "風險提示：投资有风险。",
    "我们保证按时发货。",
    "guaranteed delivery",
    "保，本周内回复您",  # a clause break between the characters
])
def test_look_alikes_are_no_hit(sentence: str) -> None:
    assert FINANCE.check(sentence) is None


def test_an_allowed_entry_suppresses_only_the_hits_it_overlaps() -> None:
    hits = FINANCE.hits("保本保息，确保本月到账")
    assert [(h.term, h.start) for h in hits] == [("保本", 0)]


def test_every_hit_in_a_sentence() -> None:
    hits = FINANCE.hits("保本，稳赚，零风险")
    assert [h.text for h in hits] == ["保本", "稳赚", "零风险"]


def test_latin_terms_match_whole_words() -> None:
    lexicon = Lexicon(["risk free", "ass"])
    assert lexicon.check("a risk-free plan") is not None
    assert lexicon.check("first class service") is None  # "ass" inside "class"
    assert lexicon.check("Massachusetts") is None


def test_terms_that_fold_to_nothing_are_reported() -> None:
    lexicon = Lexicon(["！！", "保本"], allow=["   "])
    assert lexicon.size == 1
    assert lexicon.ignored == ["！！", "   "]
    assert lexicon.check("保本") is not None


def test_an_empty_lexicon_passes_everything() -> None:
    assert Lexicon([]).check("保本稳赚") is None


def _terms(n: int) -> list[str]:
    rng = random.Random(7)
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    return sorted({"".join(rng.choice(han) for _ in range(rng.randint(2, 5))) for _ in range(n)})


def test_ten_thousand_terms_load_fast_and_check_fast() -> None:
    terms = _terms(10_500)[:10_000]
    start = time.process_time()
    lexicon = Lexicon(terms, allow=terms[:100])
    load = time.process_time() - start
    assert lexicon.size == 10_100
    assert load < 1.0  # measured ~0.05 s (bench/README.md)
    sentences = ["您好，这款理财产品的年化收益大约是百分之三点五，具体以合同为准。",
                 "我们会在本月底之前把资料寄给您，请注意查收。",
                 f"这个产品的特点是{terms[5000]}。"]
    costs = []
    for _ in range(100):
        for sentence in sentences:
            t = time.process_time()
            lexicon.check(sentence)
            costs.append(time.process_time() - t)
    assert lexicon.check(sentences[2]) is not None
    assert statistics.median(costs) < 0.0002  # measured a few µs
