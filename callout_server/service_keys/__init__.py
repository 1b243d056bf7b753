"""Service keys: one credential per dialer cluster or campaign, with its tiers and limits.

    hashing.py     generate a key; its HMAC-SHA256 digest (a subkey of CALLOUT_SECRET_KEY)
    table.py       the in-memory key table (the `SERVICE_KEYS` live section), looked up by
                   digest on every request: no I/O
    service.py     create, list, change, revoke (LiveWrites + audit)
    last_used.py   "last used", kept in memory and written in batches in the background
    limits.py      rpm, max_in_flight and daily_tokens counted across workers (Redis)
    gate.py        the ASGI gate after authentication: tier scope and limits
"""
