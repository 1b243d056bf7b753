"""The lexicons every worker checks sentences against: compiled once per reload.

    LEXICONS = Section("lexicons", load_lexicons, initial=EMPTY)
    book = store.current.section(LEXICONS)         # memory only
    verdict = book.screen(sentence, ("finance", "platform"))   # first hit, lexicons in order

A reload compiles only the lexicons whose row changed since the last load (name, version,
update time); the others are taken over as they were, so a configuration change elsewhere
costs no automaton. Compilation runs in a thread: a 10,000-term lexicon takes tens of
milliseconds, which the event loop (chat tokens) must not wait for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.config.live import Section
from callout_server.lexicons.models import LexiconRow
from callout_server.lexicons.repository import LexiconRepository
from callout_server.phrases import Lexicon, LexiconHit


@dataclass(frozen=True, slots=True)
class CompiledLexicon:
    name: str
    action: str  # replace | drop | end_turn
    replacement: str | None
    version: int
    updated_at: datetime
    lexicon: Lexicon

    @property
    def key(self) -> tuple[str, int, datetime]:
        return self.name, self.version, self.updated_at


@dataclass(frozen=True, slots=True)
class Verdict:
    """A sentence's hit: which lexicon, its action, and what is spoken instead (None: nothing)."""

    lexicon: str
    action: str
    spoken: str | None
    hit: LexiconHit


class LexiconBook:
    """Every lexicon by name, immutable; `screen` is safe from any task or thread."""

    def __init__(self, lexicons: Iterable[CompiledLexicon] = (),
                 retired: Mapping[str, CompiledLexicon] | None = None) -> None:
        self._by_name: Mapping[str, CompiledLexicon] = MappingProxyType(
            {lx.name: lx for lx in lexicons})
        # Deleted while this worker ran: still checked for the sessions that named them.
        self._retired: Mapping[str, CompiledLexicon] = MappingProxyType(dict(retired or {}))

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> CompiledLexicon | None:
        return self._by_name.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def resolve(self, names: Iterable[str]) -> tuple[CompiledLexicon, ...]:
        """The lexicons of `names`, in that order. One deleted since a session named it is
        still checked, as it last was (a live call never loses a guard it was given: an
        operator's delete of a banned-terms list is for new sessions); one this worker never
        had is skipped."""
        return tuple(lx for n in names
                     if (lx := self._by_name.get(n) or self._retired.get(n)) is not None)

    def missing(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n not in self._by_name]


def screen(lexicons: Sequence[CompiledLexicon], sentence: str) -> Verdict | None:
    """The first lexicon (in order) with a hit in `sentence`, and what it makes of it."""
    for lx in lexicons:
        hit = lx.lexicon.check(sentence)
        if hit is not None:
            spoken = lx.replacement if lx.action == "replace" else None
            return Verdict(lx.name, lx.action, spoken, hit)
    return None


EMPTY = LexiconBook()
_compiled: dict[str, CompiledLexicon] = {}  # the last load's, by name (this process)
# Deleted since this process started, the most recent last; as many as can exist at once.
_retired: dict[str, CompiledLexicon] = {}
MAX_RETIRED = 100


def compile_row(row: LexiconRow) -> CompiledLexicon:
    return CompiledLexicon(row.name, row.action, row.replacement, row.version, row.updated_at,
                           Lexicon(row.terms, allow=row.allow))


def _compile(rows: Sequence[LexiconRow]) -> list[CompiledLexicon]:
    return [compile_row(row) for row in rows]


async def load_lexicons(session: AsyncSession) -> LexiconBook:
    rows = await LexiconRepository(session).all()
    keep: list[CompiledLexicon] = []
    stale: list[LexiconRow] = []
    for row in rows:
        known = _compiled.get(row.name)
        if known is not None and known.key == (row.name, row.version, row.updated_at):
            keep.append(known)
        else:
            stale.append(row)
    built = await asyncio.to_thread(_compile, stale) if stale else []
    compiled = {lx.name: lx for lx in (*keep, *built)}
    for name, lx in _compiled.items():
        if name not in compiled:  # deleted: kept for the sessions that name it
            _retired.pop(name, None)
            _retired[name] = lx
    for name in [n for n in _retired if n in compiled]:  # created again: the new one
        del _retired[name]
    while len(_retired) > MAX_RETIRED:
        del _retired[next(iter(_retired))]
    _compiled.clear()
    _compiled.update(compiled)
    return LexiconBook((compiled[row.name] for row in rows), _retired)


LEXICONS: Section[LexiconBook] = Section("lexicons", load_lexicons, initial=EMPTY)
