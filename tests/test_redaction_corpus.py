"""The redactor over the marked corpus (tests/data/pii_corpus.py): every value found, every
decoy and every unmarked character left exactly as said, the pseudonyms of the right kind."""

from __future__ import annotations

import pytest

from callout_server.redaction import ALL_KINDS, DEFAULT_KINDS, Redactor, find
from tests.data.pii_corpus import CORPUS, KINDS
from tests.data.pii_score import evaluate

KEY = b"corpus-test-key-0123456789abcdef"
STRUCTURED = ("mobile", "landline", "id_number", "bank_card", "email")


def spans(kinds: frozenset[str]):
    return lambda text: [(f.kind, f.start, f.end) for f in find(text, kinds)]


def test_corpus_is_big_and_varied() -> None:
    assert len(CORPUS) >= 300
    kinds = {v.kind for u in CORPUS for v in u.values}
    assert kinds == set(KINDS.values())
    assert sum(len(u.decoys) for u in CORPUS) >= 100
    assert sum(u.lang == "en" for u in CORPUS) >= 50
    assert len({u.id for u in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("kinds", [DEFAULT_KINDS, ALL_KINDS], ids=["default", "all"])
def test_structured_kinds_meet_the_target_and_no_decoy_is_touched(kinds: frozenset[str]) -> None:
    score = evaluate(spans(kinds), kinds)
    assert score.decoys_touched == 0, score.touched
    for kind in STRUCTURED:
        ks = score.kinds[kind]
        assert ks.recall >= 0.995, (kind, [m for m in score.misses if m[1] == kind])
        assert ks.precision >= 0.995, (kind, [w for w in score.wrong if w[1] == kind])


def test_optional_kinds_are_off_by_default_and_precise_when_on() -> None:
    default = evaluate(spans(DEFAULT_KINDS), ALL_KINDS)
    assert default.kinds["name"].found == default.kinds["address"].found == 0
    on = evaluate(spans(ALL_KINDS), ALL_KINDS)
    for kind in ("name", "address"):
        assert on.kinds[kind].precision == 1.0, [w for w in on.wrong if w[1] == kind]
        assert on.kinds[kind].recall >= 0.9, [m for m in on.misses if m[1] == kind]


@pytest.mark.parametrize("kinds", [DEFAULT_KINDS, ALL_KINDS], ids=["default", "all"])
def test_redacted_text_keeps_everything_but_the_values(kinds: frozenset[str]) -> None:
    r = Redactor(KEY, kinds)
    for u in CORPUS:
        out = r.redact(u.text)
        found = find(u.text, kinds)
        # Outside the found spans the text is byte for byte the same, in order.
        rebuilt, at = [], 0
        for f in found:
            rebuilt.append(u.text[at:f.start])
            at = f.end
        rebuilt.append(u.text[at:])
        pieces = "".join(rebuilt)
        assert all(u.text[a:b] in out.text for a, b in u.decoys), u.id
        assert sum(out.kinds.values()) == len(found), u.id
        for v in u.values:
            if v.kind in kinds:
                assert v.text not in out.text, (u.id, v.text)
        if not found:
            assert out.text == u.text
        else:
            assert len(pieces) < len(u.text)


def test_pseudonyms_are_found_again_as_their_kind_and_never_the_value() -> None:
    r = Redactor(KEY, ALL_KINDS)
    for u in CORPUS:
        for f in find(u.text, ALL_KINDS):
            p = r.pseudonym(f)
            assert p != f.value, (u.id, f.kind)
            if f.kind in ("bank_card",):
                assert find(p, {f.kind})[0].value == p  # a card pseudonym is a card
