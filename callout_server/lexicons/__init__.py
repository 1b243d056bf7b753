"""Lexicons of the speech guard: what a sentence may not say, kept as live state.

    models.py, repository.py   the `lexicons` table (migration 0012_lexicons)
    schemas.py, router.py      `/api/admin/lexicons*` (viewers read, operators write)
    service.py                 writes through `config.live.LiveWrites`, audited
    book.py                    LEXICONS: the snapshot's section, every lexicon compiled once
                               per change (`LexiconBook`, `screen`)
    mask.py                    `mask_pii`: personal numbers spoken as their last four digits

The chat tier reads `store.current.section(LEXICONS)` (memory only) and checks each
sentence before it is spoken (tiers/chat/guard.py). docs/guards.md describes the rules.
"""
