"""Recall and precision of a personal-data detector over the marked corpus (pii_corpus.py).

A detector is `spans(text) -> [(kind, start, end)]`. A marked value counts as found when the
spans of its kind cover every letter and digit of it (separators and `+` may stay outside);
a span counts as right when its letters and digits all lie inside marked values of its kind.
A span that touches a decoy is counted apart: that number must be zero.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tests.data.pii_corpus import CORPUS, Utterance

Spans = Callable[[str], Iterable[tuple[str, int, int]]]


@dataclass
class KindScore:
    values: int = 0
    found: int = 0
    spans: int = 0
    right: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.values if self.values else 1.0

    @property
    def precision(self) -> float:
        return self.right / self.spans if self.spans else 1.0


@dataclass
class Score:
    kinds: dict[str, KindScore] = field(default_factory=dict)
    decoys_touched: int = 0
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (id, kind, value)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (id, kind, span text)
    touched: list[tuple[str, str]] = field(default_factory=list)  # (id, decoy text)


def _significant(text: str, start: int, end: int) -> set[int]:
    return {i for i in range(start, end) if text[i].isalnum()}


def score_one(u: Utterance, spans: list[tuple[str, int, int]], kinds: frozenset[str],
              score: Score, kind_map: dict[str, str] | None = None) -> None:
    if kind_map:  # e.g. mobile and landline scored as one "phone" for a detector without both
        u = Utterance(u.id, u.text, tuple(type(v)(kind_map.get(v.kind, v.kind), v.start, v.end,
                                                  v.text) for v in u.values), u.decoys, u.lang)
        spans = [(kind_map.get(k, k), s, e) for k, s, e in spans]
        kinds = frozenset(kind_map.get(k, k) for k in kinds)
    for v in u.values:
        if v.kind not in kinds:
            continue
        ks = score.kinds.setdefault(v.kind, KindScore())
        ks.values += 1
        covered = set().union(*[range(s, e) for k, s, e in spans if k == v.kind] or [set()])
        if _significant(u.text, v.start, v.end) <= covered:
            ks.found += 1
        else:
            score.misses.append((u.id, v.kind, v.text))
    for kind, s, e in spans:
        ks = score.kinds.setdefault(kind, KindScore())
        ks.spans += 1
        inside = set().union(*[range(v.start, v.end) for v in u.values if v.kind == kind]
                             or [set()])
        sig = _significant(u.text, s, e)
        if sig and sig <= inside:
            ks.right += 1
        else:
            score.wrong.append((u.id, kind, u.text[s:e]))
    for ds, de in u.decoys:
        if any(s < de and ds < e for _, s, e in spans):
            score.decoys_touched += 1
            score.touched.append((u.id, u.text[ds:de]))


def evaluate(spans: Spans, kinds: Iterable[str], corpus: tuple[Utterance, ...] = CORPUS,
             kind_map: dict[str, str] | None = None) -> Score:
    kinds = frozenset(kinds)
    score = Score()
    for u in corpus:
        score_one(u, [sp for sp in spans(u.text) if sp[0] in kinds], kinds, score, kind_map)
    return score
