"""Global intents: what a customer can say at any node that overrides it (stop calling me, a
complaint, asking for a person), managed by operators as live state.

    models.py      the rows (migration 0011_global_intents): the list and its version
    repository.py  their SQL
    compiled.py    CompiledIntents: the list and its phrase rules, compiled once per change
    live.py        intents_section(defaults): the snapshot's section (config/live.py)
    service.py     reads, the whole-list save (optimistic locking, audit), try a sentence
    router.py      /api/admin/nlu/global-intents
    schemas.py, errors.py

The rules themselves are `callout_server.phrases` (pure); the NLU tier reads the compiled
value from the snapshot on every decision (memory only). docs/guards.md, docs/nlu.md.
"""
