"""Authentication and authorisation: console logins, sessions, bearer tokens.

    passwords   argon2id hashing, timing-uniform verification
    tokens      bearer token generation, sha256 storage, the in-memory TokenTable
    throttle    per (username, client) login backoff, in memory
    models      console_users, api_tokens, console_sessions (schema `callout`)
    service     AuthService: bootstrap at start, login/logout, session lookup
    router      /api/auth/login, /api/auth/logout, /api/auth/me

The route dependencies `require_admin` / `require_service` live in `callout_server.api.deps`.
This package never imports `callout_server.api.deps` outside `router`, so deps can import
it without a cycle.
"""
