"""Lexicon matching for speech guards: is a forbidden term in this sentence, and where.

    lexicon = Lexicon(["保本", "稳赚", "零风险"], allow=["确保本月", "担保本金"])
    lexicon.check("这款产品穩 賺不赔")  -> LexiconHit(term="稳赚", start=5, end=8, text="穩 賺")
    lexicon.check("确保本月到账")      -> None

Matching is on the folded text (`normalize`): full-width/half-width and NFKC, traditional
or simplified, case, and spaces or marks inside a term (`稳 赚`, `保-本`) make no difference;
a term does not match across a clause break (`,` `。` ...) nor inside a Latin word or a
number. An allowed look-alike suppresses every hit it overlaps: `确保本月` holds `保本`, so
`确保本月` is no hit, while `保本保息，确保本月到账` still is (its first `保本` overlaps no
allowed entry).

The hot path is one `str.translate` and one automaton pass (`PhraseBook.scan`); offsets
back into the sentence are computed only when a term is there. A 10,000-term lexicon loads
in tens of milliseconds and checks a sentence in a few µs (bench/README.md, "Guards").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from callout_server.phrases.matcher import PhraseBook
from callout_server.phrases.normalize import fold, normalize

_TERM, _ALLOW = "term", "allow"


@dataclass(frozen=True, slots=True)
class LexiconHit:
    """A term found in a sentence: the term as the lexicon lists it, and where it was said
    (`sentence[start:end] == text`)."""

    term: str
    start: int
    end: int
    text: str


class Lexicon:
    """Terms and allowed look-alikes compiled once; `check` is safe to call from any thread."""

    def __init__(self, terms: Iterable[str], allow: Iterable[str] = ()) -> None:
        self._book = PhraseBook(
            [(_TERM, t) for t in terms] + [(_ALLOW, a) for a in allow]
        )
        #: terms and allow entries that fold to nothing (only punctuation or spaces)
        self.ignored = [text for _, text in self._book.ignored]

    @property
    def size(self) -> int:
        return len(self._book)

    def check(self, sentence: str) -> LexiconHit | None:
        """The first hit in the sentence, or None."""
        hits = self.hits(sentence, first=True)
        return hits[0] if hits else None

    def hits(self, sentence: str, *, first: bool = False) -> list[LexiconHit]:
        """Every hit in the sentence, leftmost first (the longest term where two start together)."""
        raw = self._book.scan(fold(sentence))
        if not raw or _TERM not in self._book.labels_in(raw):
            return []
        norm = normalize(sentence)
        found = self._book.search(norm)
        allowed = [f for f in found if f.pattern.label == _ALLOW]
        out: list[LexiconHit] = []
        covered_until = -1
        for f in found:
            if f.pattern.label != _TERM or any(a.overlaps(f) for a in allowed):
                continue
            if f.start < covered_until:  # a shorter term inside one already reported
                continue
            start, end = norm.span(f.start, f.end)
            out.append(LexiconHit(f.pattern.text, start, end, sentence[start:end]))
            covered_until = f.end
            if first:
                break
        return out
