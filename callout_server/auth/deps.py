"""Route dependencies for the caller's identity: who is calling, and may they.

    require(access)       the one role check: a route's dependency, built once per Access
    require_role(role)    require() for the console roles: viewer < operator < admin
    require_service       the dialer's routes (service token, admin token, operators)
    require_admin         require_role(Role.admin)
    authenticate          any valid credential, no role check (the edge middleware's call)

Bearer checks run on the dialer's hot path: they hash the presented token and compare it
with the hashes held in memory by `AuthService.tokens` (the environment's tokens), then
`AuthService.keys` (service keys, `service_keys/table.py`), never touching the database. Only a
request without an `Authorization` header falls through to the console session cookie,
which costs one primary-key query (that query also reads the user's current role, so a
demotion takes effect on the very next request).

A present `Authorization` header is decisive: a bad token is a 401 even if a valid session
cookie came along, so a misconfigured client never silently acts as whoever is logged in.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

from fastapi import Request

from callout_server.audit.trail import Actor
from callout_server.auth.roles import BY_ROLE, SERVICE, SERVICE_ROUTES, Access, Role
from callout_server.auth.service import AuthService, KeyGrant, SessionInfo
from callout_server.errors import Forbidden, Unauthorized
from callout_server.i18n import msg

SESSION_COOKIE = "callout_session"
CSRF_HEADER = "X-CSRF-Token"
# Methods that change state; a session's request with one of these must echo its CSRF token.
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a console user (via session cookie) or an API token.

    `role` is the user's role (viewer, operator, admin), `admin` for the admin token and
    `service` for the service token. `ip` is the client address the server believes
    (a forwarded one only from a proxy named in --forwarded-allow-ips).
    """

    name: str
    role: str
    via: Literal["session", "token"]
    ip: str | None = None
    # A service key's grant (service_keys.table.ServiceKey): its tiers, campaign and limits.
    key: KeyGrant | None = None

    @property
    def actor(self) -> Actor:
        """The principal as the audit trail records it."""
        return Actor(self.name, self.via, self.ip)


def _auth(request: Request) -> AuthService:
    return request.app.state.components[AuthService]  # type: ignore[no-any-return]


def client_ip(request: Request) -> str | None:
    # The scope's (host, port), as `request.client` reads it, without building an Address.
    client = request.scope.get("client")
    return client[0] if client else None


def _bearer(header: str) -> str:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(msg("bearer_expected"))
    return token.strip()


async def authenticate(request: Request) -> Principal:
    """Any valid credential. Session writes must carry the session's CSRF token.

    The edge middleware (api/edge.py, handed this function by app.py) calls it before any
    body is read; the route's dependency then finds the principal in the request state and
    does no second lookup.
    """
    # `request.state` wraps the scope's "state" dict: read it there (no State object, no
    # AttributeError raised and caught when the edge has not been by yet).
    principal: Principal | None = request.scope.get("state", {}).get("principal")
    if principal is None:
        principal = await _identify(request)
        request.state.principal = principal
    return principal


async def _identify(request: Request) -> Principal:
    header = request.headers.get("authorization")
    if header is not None:
        auth = _auth(request)
        token = _bearer(header)
        identity = auth.tokens.lookup(token)
        if identity is None:
            return _keyed(auth, token, request)
        # The admin token acts as an admin; the service token as `service`.
        return Principal(identity.name, identity.scope, "token", client_ip(request))

    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        raise Unauthorized(msg("auth_required"))
    session = await _auth(request).session(session_id)
    if session is None:
        raise Unauthorized(msg("session_expired"))
    request.state.console_session = session
    if request.method in _UNSAFE_METHODS:
        _check_csrf(request, session)
    return Principal(session.username, session.role, "session", client_ip(request))


def _keyed(auth: AuthService, token: str, request: Request) -> Principal:
    """A service key (memory only: `AuthService.keys`), acting as `service`."""
    grant = auth.keys(token) if auth.keys is not None else None
    if grant is None:
        raise Unauthorized(msg("invalid_token"))
    refusal = grant.refusal(time.time())
    if refusal is not None:
        raise Unauthorized(refusal)
    return Principal(f"service-key:{grant.id}", SERVICE, "token", client_ip(request), grant)


def _check_csrf(request: Request, session: SessionInfo) -> None:
    # A cross-site page can make the browser send the cookie (were SameSite ever relaxed) but
    # cannot read /api/auth/me to learn this token, so echoing it proves a same-origin caller.
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
        raise Forbidden(msg("csrf_failed", header=CSRF_HEADER), code="csrf_failed")


AccessDependency = Callable[[Request], Awaitable[Principal]]


@cache
def require(access: Access) -> AccessDependency:
    """The route dependency for `access`: the principal, or 403 `forbidden`.

    Built once per Access (FastAPI then runs it once per request), and tagged with it:
    `dependency.access` is what the route-access test reads off every route.
    """

    async def dependency(request: Request) -> Principal:
        principal = await authenticate(request)
        if not access.allows(principal.role, principal.via):
            raise Forbidden(access.refusal(principal.role, principal.via))
        return principal

    dependency.__name__ = f"require_{access.name}"
    dependency.access = access  # type: ignore[attr-defined]
    return dependency


def require_role(role: Role) -> AccessDependency:
    """At least `role` (a console user's, or the admin token's `admin`)."""
    return require(BY_ROLE[role])


require_admin = require_role(Role.admin)
require_service = require(SERVICE_ROUTES)
