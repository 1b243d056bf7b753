"""Many labelled phrases found at once in normalised text: one Aho-Corasick automaton.

    book = PhraseBook([("opt_out", "别再*打电话"), ("negator", "不用"), ...], wildcards=True)
    book.search(normalize(text)) -> [Found(pattern, start, end), ...]   every occurrence
    book.scan(fold(text))        -> raw automaton matches (the hot path's first look)

A phrase is folded like the text it is looked for in (`normalize.fold`). A match keeps Latin
words and numbers whole and does not run across a clause break (`Normalized.edges_ok`,
`clause_break`). With `wildcards=True`, `*` inside a phrase stands for at most `GAP` tokens
of anything within the same clause (`别再*打电话`: 别再打电话, 别再给我打电话, 别再往我家打电话);
a lexicon term is always literal.

Why an automaton: `ahocorasick-rs` finds every occurrence of thousands of phrases in one
pass over the text, about 2 µs for a sentence whatever the phrase count; a compiled `re`
alternation of the same phrases costs 0.2-0.7 ms at 3,000-10,000 phrases and finds no
overlapping matches (figures: bench/README.md, "Phrase matchers").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick_rs

from callout_server.phrases.normalize import Normalized, fold

GAP = 3  # tokens a `*` may stand for
WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class Pattern:
    """A phrase as written, with the label the caller files it under."""

    label: str
    text: str
    parts: tuple[str, ...]  # the folded literal pieces (one unless the phrase has `*`)


@dataclass(frozen=True, slots=True)
class Found:
    """One occurrence of a pattern, in normalised offsets."""

    pattern: Pattern
    start: int
    end: int

    def overlaps(self, other: Found) -> bool:
        return self.start < other.end and other.start < self.end


def parse(text: str, *, wildcards: bool = False) -> tuple[str, ...] | None:
    """A phrase's folded literal pieces, or None when nothing of it is left to match
    (only punctuation or spaces, or a piece between `*` that folds to nothing)."""
    pieces = text.split(WILDCARD) if wildcards else [text]
    parts = tuple(fold(p) for p in pieces if p.strip())
    if not parts or not all(parts):
        return None
    return parts


class PhraseBook:
    """Labelled phrases compiled into one automaton; unusable phrases are kept in `ignored`."""

    def __init__(self, phrases: Iterable[tuple[str, str]], *, wildcards: bool = False) -> None:
        self.patterns: list[Pattern] = []
        self.ignored: list[tuple[str, str]] = []
        literals: dict[str, int] = {}
        # literal index -> (pattern index, piece position) for each pattern using it
        self._uses: list[list[tuple[int, int]]] = []
        for label, text in phrases:
            parts = parse(text, wildcards=wildcards)
            if parts is None:
                self.ignored.append((label, text))
                continue
            index = len(self.patterns)
            self.patterns.append(Pattern(label, text, parts))
            for position, part in enumerate(parts):
                if part not in literals:
                    literals[part] = len(literals)
                    self._uses.append([])
                self._uses[literals[part]].append((index, position))
        self.literals = list(literals)
        self._automaton = (
            ahocorasick_rs.AhoCorasick(self.literals, matchkind=ahocorasick_rs.MATCHKIND_STANDARD)
            if self.literals else None
        )

    def __len__(self) -> int:
        return len(self.patterns)

    def scan(self, folded: str) -> list[tuple[int, int, int]]:
        """Raw overlapping matches (literal index, start, end) in a folded text, unchecked."""
        if self._automaton is None or not folded:
            return []
        return self._automaton.find_matches_as_indexes(folded, overlapping=True)

    def openers(self, labels: set[str]) -> frozenset[int]:
        """The literals that begin a pattern labelled with one of `labels` (as `scan` numbers
        them): a text in which none occurs has no occurrence of those patterns."""
        return frozenset(lit for lit, uses in enumerate(self._uses)
                         for index, position in uses
                         if position == 0 and self.patterns[index].label in labels)

    def labels_in(self, raw: list[tuple[int, int, int]]) -> set[str]:
        """The labels whose patterns use any literal of `raw` (a cheap pre-check)."""
        return {self.patterns[p].label for lit, _, _ in raw for p, _ in self._uses[lit]}

    def search(self, norm: Normalized) -> list[Found]:
        """Every occurrence of every pattern in the normalised text, by start then length."""
        raw = self.scan(norm.text)
        if not raw:
            return []
        # piece occurrences per (pattern, position), checked once
        pieces: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for lit, start, end in raw:
            if not norm.edges_ok(start, end) or norm.clause_break(start, end):
                continue
            for use in self._uses[lit]:
                pieces.setdefault(use, []).append((start, end))
        found: list[Found] = []
        for (index, position), spans in pieces.items():
            if position:
                continue
            pattern = self.patterns[index]
            for start, end in spans:
                stop = self._chain(norm, pieces, index, len(pattern.parts), end)
                if stop is not None:
                    found.append(Found(pattern, start, stop))
        found.sort(key=lambda f: (f.start, -(f.end - f.start)))
        return found

    @staticmethod
    def _chain(norm: Normalized, pieces: dict[tuple[int, int], list[tuple[int, int]]],
               index: int, count: int, end: int) -> int | None:
        """Where a wildcard pattern whose first piece ends at `end` ends, if it completes."""
        for position in range(1, count):
            best = None
            for start, stop in pieces.get((index, position), ()):
                if start >= end and not norm.clause_break(end - 1, start + 1) \
                        and norm.tokens_between(end, start) <= GAP \
                        and (best is None or start < best[0]):
                    best = (start, stop)
            if best is None:
                return None
            end = best[1]
        return end
