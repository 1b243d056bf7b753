"""Personal values from tests/data/pii_corpus.py, and the check that none is in a text.

    said = structured_utterances(12)          # utterances holding structured kinds only
    leaks(text, said) -> ["13872837651", ...] # every spelling or normalised value found in text
"""

from __future__ import annotations

from callout_server.redaction import DEFAULT_KINDS, find
from tests.data.pii_corpus import CORPUS, Utterance


def structured_utterances(n: int, lang: str | None = None) -> list[Utterance]:
    """`n` corpus utterances, spread over the groups, each holding only default kinds
    that the redactor finds whole (the corpus's rare misses are the benchmark's business)."""
    picked: list[Utterance] = []
    groups: dict[str, list[Utterance]] = {}
    for u in CORPUS:
        if not u.values or any(v.kind not in DEFAULT_KINDS for v in u.values):
            continue
        if lang and u.lang != lang:
            continue
        spans = {(f.start, f.end) for f in find(u.text, DEFAULT_KINDS)}
        if all((v.start, v.end) in spans for v in u.values):
            groups.setdefault(u.id.rsplit("_", 1)[0], []).append(u)
    while len(picked) < n and any(groups.values()):
        for items in groups.values():
            if items and len(picked) < n:
                picked.append(items.pop(0))
    return picked


def personal_values(said: list[Utterance]) -> set[str]:
    """Each value as spelled, and normalised (digits, the e-mail address)."""
    out: set[str] = set()
    for u in said:
        for v in u.values:
            out.add(v.text)
        for f in find(u.text, DEFAULT_KINDS):
            out.add(f.value)
    return {v for v in out if len(v) >= 5}


def leaks(text: str, said: list[Utterance]) -> list[str]:
    return sorted(v for v in personal_values(said) if v in text)
