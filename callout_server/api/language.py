"""The caller's language for one request, negotiated once at the edge.

The edge middleware calls `negotiate_request()` before anything else: the language is kept
in the request's scope state (for the error handlers, including the 500 handler that runs
outside the middleware) and made current (`i18n.current()`) for the services the request
reaches.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import Scope

from callout_server.i18n import Locale, negotiate

STATE_KEY = "locale"


def accept_language(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"accept-language":
            return str(value.decode("latin-1"))
    return None


def negotiate_request(scope: Scope, default: Locale) -> Locale:
    """The request's language, stored in its scope state."""
    locale = negotiate(accept_language(scope), default)
    scope.setdefault("state", {})[STATE_KEY] = locale
    return locale


def request_locale(request: Request) -> Locale:
    """The language the edge negotiated for `request` (the header alone if it did not run)."""
    state = request.scope.get("state") or {}
    stored = state.get(STATE_KEY)
    if stored in ("zh", "en"):
        return stored  # type: ignore[no-any-return]
    return negotiate(request.headers.get("accept-language"))
