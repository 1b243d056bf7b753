"""The audit trail: who changed what, when, and from where.

    trail      Actor (name, via, ip) and record(): one row added to the caller's unit of
               work, so a change and its audit row commit or roll back together
    models     audit_events (schema `callout`)
    log        AuditLog: filtered keyset pages (newest first) and the retention purge
    schemas    the answer of GET /api/admin/audit
    settings   the `[audit]` section of config.toml

A floor below `auth`: the login, the configuration writes, the people admin and the
script drafts all record here; the read route lives with the people admin (`people/`).
Details are short and never carry a password, key, token or cookie (`trail.scrub`).
"""
