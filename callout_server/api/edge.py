"""What every request passes before routing, as plain ASGI (no body buffering, streams intact).

In order, each refusal answered in the contract's error envelope without reading the body
(in the caller's language, negotiated first from `Accept-Language`):

    1. a NUL character in the path or a query value        -> 422 naming the parameter
    2. a declared body larger than the route's limit         -> 413 (Content-Length)
    3. /api/* except login/logout without valid credentials  -> 401 / 403 (CSRF); 503 when a
       console session cannot be looked up (database away)
    4. a streamed (chunked) body that grows past the limit   -> 413 while it is read

Before any of it, the moment the request arrived is noted (`received_at`): a route with a
deadline counts it from there, not from when its handler got to run.

Authentication happens here, once, so an anonymous caller can make the server read nothing;
the principal is left in the request state, where the route's dependencies find it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from callout_server.api.errors import (
    DATABASE_RETRY_AFTER_S,
    MessageHTTPException,
    database_unavailable_body,
    error_headers,
    validation_error_body,
)
from callout_server.api.language import negotiate_request
from callout_server.db.engine import DatabaseDown
from callout_server.errors import ApiError
from callout_server.i18n import Locale, enter, leave, msg, text

RECEIVED_AT = "received_at"

# Routes that take credentials in their body, or need none.
PUBLIC_API_PATHS = frozenset({"/api/auth/login", "/api/auth/logout"})


class BodyTooLarge(MessageHTTPException):
    def __init__(self, limit: int, setting: str) -> None:
        super().__init__(413, "payload_too_large",
                         msg("payload_too_large", limit=limit, setting=setting))


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, *, body_limit: Callable[[str], tuple[int, str]],
                 authenticate: Callable[[Request], Awaitable[object]],
                 default_locale: Locale = "zh") -> None:
        self.app = app
        self.body_limit = body_limit
        self.authenticate = authenticate
        self.default_locale: Locale = default_locale

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # When the request reached the app: a caller's time budget (`deadline_ms`) is spent
        # from here, also while its body arrives and while the loop is busy with others.
        scope.setdefault("state", {})[RECEIVED_AT] = time.perf_counter()
        # 0. the caller's language (Accept-Language, else [server] locale), for everything below
        locale = negotiate_request(scope, self.default_locale)
        token = enter(locale)
        if scope["path"].startswith("/api/"):
            send = _vary_language(send)
        try:
            await self._serve(scope, receive, send, locale)
        finally:
            leave(token)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, locale: Locale) -> None:
        bad = _nul_parameter(scope)
        if bad is not None:
            fields = [{"field": bad, "code": "nul_character", "message": text("nul_character", locale)}]
            await JSONResponse(validation_error_body(fields, locale), status_code=422)(
                scope, receive, send)
            return
        path: str = scope["path"]
        limit, setting = self.body_limit(path)  # bytes, and the setting the 413 names
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _render(BodyTooLarge(limit, setting), scope, receive, send, locale)
            return
        if path.startswith("/api/") and path not in PUBLIC_API_PATHS:
            try:
                await self.authenticate(Request(scope))
            except ApiError as exc:
                await JSONResponse(exc.body(locale), status_code=exc.status,
                                   headers=error_headers(exc))(scope, receive, send)
                return
            except DatabaseDown:  # a console session is looked up in the database
                await JSONResponse(database_unavailable_body(locale), status_code=503, headers={
                    "Retry-After": str(DATABASE_RETRY_AFTER_S)})(scope, receive, send)
                return
        await self.app(scope, _counting(receive, limit, setting), send)


async def received_at(request: Request) -> float | None:
    """A route dependency: `time.perf_counter()` when the request reached the edge (None
    outside the app). async: a plain `def` dependency runs in a worker thread."""
    return request.scope.get("state", {}).get(RECEIVED_AT)  # type: ignore[no-any-return]


def _vary_language(send: Send) -> Send:
    """Every API answer may be worded in the caller's language: tell caches so."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()),
                                              (b"vary", b"Accept-Language")]}
        await send(message)

    return wrapped


def _nul_parameter(scope: Scope) -> str | None:
    if "\x00" in scope["path"]:
        return "path"
    query: bytes = scope.get("query_string", b"")
    if b"%00" not in query and b"\x00" not in query:
        return None
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            return name.replace("\x00", "") or "query"
    return "query"


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server answers a malformed length itself
    return None


def _counting(receive: Receive, limit: int, setting: str) -> Receive:
    """`receive` that refuses a body (chunked, or lying about its length) beyond `limit`."""
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                # Raised inside the route's body read: FastAPI re-raises an HTTPException,
                # and the error handlers render it as the contract's 413.
                raise BodyTooLarge(limit, setting)
        return message

    return wrapped


async def _render(exc: MessageHTTPException, scope: Scope, receive: Receive, send: Send,
                  locale: Locale) -> None:
    body = {"error": {"code": exc.code, "message": exc.msg.render(locale)}}
    await JSONResponse(body, status_code=exc.status_code)(scope, receive, send)
