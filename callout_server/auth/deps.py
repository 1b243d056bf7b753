"""Route dependencies for the caller's identity: who is calling, and may they.

    require_admin     admin bearer token, or a console session (CSRF-checked on writes)
    require_service   service or admin bearer token, or a console session (same CSRF rule)
    authenticate      any valid credential, no scope check (used by /api/auth/me)

Bearer checks run on the dialer's hot path: they hash the presented token and compare it
with the hashes held in memory by `AuthService.tokens`, never touching the database. Only a
request without an `Authorization` header falls through to the console session cookie,
which costs one primary-key query.

A present `Authorization` header is decisive: a bad token is a 401 even if a valid session
cookie came along, so a misconfigured client never silently acts as whoever is logged in.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Literal

from fastapi import Request

from callout_server.auth.service import AuthService, SessionInfo
from callout_server.errors import Forbidden, Unauthorized
from callout_server.i18n import msg

Role = Literal["admin", "service"]

SESSION_COOKIE = "callout_session"
CSRF_HEADER = "X-CSRF-Token"
# Methods that change state; a session's request with one of these must echo its CSRF token.
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a console user (via session cookie) or an API token."""

    name: str
    role: Role
    via: Literal["session", "token"]


def _auth(request: Request) -> AuthService:
    return request.app.state.components[AuthService]  # type: ignore[no-any-return]


def _bearer(header: str) -> str:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(msg("bearer_expected"))
    return token.strip()


async def authenticate(request: Request) -> Principal:
    """Any valid credential. Session writes must carry the session's CSRF token.

    The edge middleware (api/edge.py, handed this function by app.py) calls it before any
    body is read; the route's
    dependency then finds the principal in the request state and does no second lookup.
    """
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:
        principal = await _identify(request)
        request.state.principal = principal
    return principal


async def _identify(request: Request) -> Principal:
    header = request.headers.get("authorization")
    if header is not None:
        identity = _auth(request).tokens.lookup(_bearer(header))
        if identity is None:
            raise Unauthorized(msg("invalid_token"))
        return Principal(identity.name, identity.scope, "token")

    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        raise Unauthorized(msg("auth_required"))
    session = await _auth(request).session(session_id)
    if session is None:
        raise Unauthorized(msg("session_expired"))
    request.state.console_session = session
    if request.method in _UNSAFE_METHODS:
        _check_csrf(request, session)
    # The contract: a console session acts with admin scope.
    return Principal(session.username, "admin", "session")


def _check_csrf(request: Request, session: SessionInfo) -> None:
    # A cross-site page can make the browser send the cookie (were SameSite ever relaxed) but
    # cannot read /api/auth/me to learn this token, so echoing it proves a same-origin caller.
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
        raise Forbidden(msg("csrf_failed", header=CSRF_HEADER), code="csrf_failed")


async def require_admin(request: Request) -> Principal:
    """Admin scope: console session (CSRF-checked on writes) or the admin bearer token."""
    principal = await authenticate(request)
    if principal.role != "admin":
        raise Forbidden(msg("admin_required"))
    return principal


async def require_service(request: Request) -> Principal:
    """Service scope (/api/nlu, /api/chat, /api/scripts): service or admin bearer token, or a console session."""
    return await authenticate(request)
