"""Authentication and authorisation: console logins, sessions, bearer tokens, roles.

    passwords   argon2id hashing, timing-uniform verification
    policy      what a username and a new password must be
    tokens      bearer token generation, sha256 storage, the in-memory TokenTable
    throttle    per (username, client) login backoff, in memory
    roles       viewer < operator < admin, and the Access a route declares
    models      users, api_tokens, user_sessions (schema `callout`)
    bootstrap_credentials
                the environment's admin and tokens, or generated ones printed once at first start
    service     AuthService: bootstrap at start, login/logout, session lookup, own password
    errors      too many attempts (429), managed by the environment (409)
    deps        who is calling: require(access) / require_role(role), the one role check
    router      /api/auth/login, /logout, /me, /password

Managing other people (`/api/admin/users`) is the `people` package, a floor above.
"""
