"""The gate a service key's request passes after authentication, as plain ASGI.

The edge (api/edge.py) has authenticated the caller before any body was read and left the
principal in the request state; this middleware, inside it, looks at a service key's
request to the dialer's routes only (every other caller and path passes untouched):

    1. the route's tier outside the key's tiers                 -> 403 forbidden
    2. its limits (limits.py), admitted from the worker's reserve -> 429 with Retry-After
    3. "last used" noted in memory (last_used.py)
    4. who is calling (key id, campaign) made current for the call log's records; the
       tokens the vendors report are added to the key's day once the request is done

Nothing here reads the body or waits on the database.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from callout_server.api.errors import error_headers
from callout_server.calllog.caller import CALLER, Caller
from callout_server.errors import ApiError
from callout_server.i18n import current
from callout_server.service_keys.errors import TierRefused
from callout_server.service_keys.last_used import LastUsed
from callout_server.service_keys.limits import KeyLimiter
from callout_server.service_keys.table import ServiceKey

# The dialer's routes, by the tier they call.
TIER_PATHS = (("/api/nlu/", "nlu"), ("/api/chat/", "chat"), ("/api/scripts/", "script"))


def tier_of(path: str) -> str | None:
    for prefix, tier in TIER_PATHS:
        if path.startswith(prefix):
            return tier
    return None


class KeyGate:
    def __init__(self, app: ASGIApp, *, components: Callable[[], dict[type, Any]]) -> None:
        self.app = app
        self._components = components

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal") if scope["type"] == "http" else None
        key: ServiceKey | None = getattr(principal, "key", None)
        tier = tier_of(scope["path"]) if key is not None else None
        if key is None or tier is None:
            await self.app(scope, receive, send)
            return
        guard = self._components().get(KeyGuard)
        try:
            if not key.allows_tier(tier):
                raise TierRefused(tier, key.tiers)
            if guard is None:
                await self.app(scope, receive, send)
                return
            await guard.serve(key, tier, self.app, scope, receive, send)
        except ApiError as exc:  # raised before the route ran: nothing was sent yet
            await JSONResponse(exc.body(current()), status_code=exc.status,
                               headers=error_headers(exc))(scope, receive, send)


class KeyGuard:
    """What the gate does for a key in scope: limits, last used, the caller's identity."""

    def __init__(self, last_used: LastUsed, limiter: KeyLimiter) -> None:
        self.last_used = last_used
        self.limiter = limiter

    async def serve(self, key: ServiceKey, tier: str, app: ASGIApp, scope: Scope,
                    receive: Receive, send: Send) -> None:
        self.last_used.touch(key.id)
        limiter = self.limiter
        spent = partial(limiter.spend, key) if key.daily_tokens is not None else _nowhere
        token = CALLER.set(Caller(key.id, key.campaign, spent))
        try:
            if not key.limited:
                await app(scope, receive, send)
                return
            lease = await limiter.acquire(key)  # LimitExceeded: the gate answers the 429
            try:
                await app(scope, receive, send)
            finally:  # the answer is sent (a stream: to its end), the slot is free
                await limiter.release(key, lease)
        finally:
            CALLER.reset(token)


def _nowhere(tokens: int) -> None:
    return None
