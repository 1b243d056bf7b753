"""Lexicons as live state: saved like a configuration, checked from memory.

    lexicons = LexiconService(writes, book=lambda: store.current.section(LEXICONS))
    out, created = await lexicons.put("finance", LexiconIn(...), actor)
    await lexicons.delete("finance", version=3, actor=actor)
    lexicons.try_sentence(TryRequest(text="..."))          # memory only

A write is one `LiveWrites.unit()`: the generation bumped first, the row written with its
new `version`, the audit event in the same transaction, then the generation published, so
every worker's next snapshot compiles the lexicon (book.py) within a second. A stale
`version` is a 409 and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from callout_server.audit.trail import Actor, record
from callout_server.config.live import LiveWrites
from callout_server.db.base import utcnow
from callout_server.lexicons.book import LexiconBook, screen
from callout_server.lexicons.errors import (
    LexiconNotFound,
    LexiconVersionConflict,
    TooManyLexicons,
    UnknownLexicons,
)
from callout_server.lexicons.mask import mask_pii
from callout_server.lexicons.models import LexiconRow
from callout_server.lexicons.repository import LexiconRepository
from callout_server.lexicons.schemas import (
    MAX_LEXICONS,
    LexiconIn,
    LexiconList,
    LexiconOut,
    TryHit,
    TryRequest,
    TryResult,
)


class LexiconService:
    def __init__(self, writes: LiveWrites, book: Callable[[], LexiconBook]) -> None:
        self._writes = writes
        self._book = book

    async def list(self) -> LexiconList:
        async with self._writes.read() as session:
            return LexiconList(items=[_out(r) for r in await LexiconRepository(session).all()])

    async def get(self, name: str) -> LexiconOut:
        async with self._writes.read() as session:
            row = await LexiconRepository(session).get(name)
            if row is None:
                raise LexiconNotFound(name)
            return _out(row)

    async def put(self, name: str, body: LexiconIn, actor: Actor) -> tuple[LexiconOut, bool]:
        """Create or replace `name`; True when it was created."""
        async with self._writes.unit() as (session, generation):
            repo = LexiconRepository(session)
            row = await repo.get(name, for_update=True)
            _check_version(name, body.version, row)
            now = utcnow()
            created = row is None
            if row is None:
                if await repo.count() >= MAX_LEXICONS:
                    raise TooManyLexicons(MAX_LEXICONS)
                row = LexiconRow(name=name, version=0, created_at=now)
            old_terms = set(row.terms or ())
            new_terms = set(body.terms)
            changes = {"terms_added": [t for t in body.terms if t not in old_terms][:20],
                       "terms_removed": [t for t in row.terms or () if t not in new_terms][:20]}
            row.terms, row.allow = list(body.terms), list(body.allow)
            row.action, row.replacement = body.action, body.replacement
            row.version += 1
            row.updated_at, row.updated_by = now, actor.name[:128]
            if created:
                await repo.add(row)
            record(session, actor, "lexicon.create" if created else "lexicon.update",
                   target=f"lexicon:{name}",
                   detail={**_summary(row), **changes, "generation": generation})
            await session.flush()
            out = _out(row)
        await self._writes.committed(generation)
        return out, created

    async def delete(self, name: str, version: int | None, actor: Actor) -> None:
        async with self._writes.unit() as (session, generation):
            repo = LexiconRepository(session)
            row = await repo.get(name, for_update=True)
            if row is None:
                raise LexiconNotFound(name)
            _check_version(name, version, row)
            record(session, actor, "lexicon.delete", target=f"lexicon:{name}",
                   detail={**_summary(row), "generation": generation})
            await repo.remove(name)
        await self._writes.committed(generation)

    def try_sentence(self, req: TryRequest) -> TryResult:
        """What the guard would do with `req.text`: the live lexicons of this worker."""
        book = self._book()
        names = req.lexicons if req.lexicons is not None else list(book.names)
        missing = book.missing(names)
        if missing:
            raise UnknownLexicons(missing, field="lexicons")
        chosen = book.resolve(names)
        hits = [TryHit(lexicon=lx.name, action=lx.action, term=h.term, text=h.text,  # type: ignore[arg-type]
                       start=h.start, end=h.end)
                for lx in chosen for h in lx.lexicon.hits(req.text)]
        verdict = screen(chosen, req.text)
        if verdict is not None:
            return TryResult(action=verdict.action, lexicon=verdict.lexicon,  # type: ignore[arg-type]
                             spoken=verdict.spoken, hits=hits)
        if req.mask_pii:
            masked, count = mask_pii(req.text)
            if count:
                return TryResult(action="mask_pii", spoken=masked, hits=hits)
        return TryResult(action=None, spoken=req.text, hits=hits)


def _check_version(name: str, sent: int | None, row: LexiconRow | None) -> None:
    """`sent` is the version the writer read: None writes unconditionally."""
    if sent is not None and (row is None or row.version != sent):
        raise LexiconVersionConflict(name, sent, row.version if row is not None else 0)


def _summary(row: LexiconRow) -> dict[str, object]:
    """What the audit trail keeps of a lexicon: its shape, not ten thousand terms."""
    return {"name": row.name, "version": row.version, "action": row.action,
            "replacement": row.replacement, "terms": len(row.terms), "allow": len(row.allow)}


def _out(row: LexiconRow) -> LexiconOut:
    return LexiconOut(name=row.name, terms=list(row.terms), allow=list(row.allow),
                      action=row.action, replacement=row.replacement,  # type: ignore[arg-type]
                      version=row.version, created_at=row.created_at,
                      updated_at=row.updated_at, updated_by=row.updated_by)
