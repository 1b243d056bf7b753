"""The contract's error body, rendered in one place, in the caller's language.

Domain errors (`callout_server.errors.ApiError` and its subclasses) render as
`{"error": {"code", "message", ...}}` with their own status; a unit of work that met a
database that cannot serve it (`db.engine.DatabaseDown`) is 503 `database_unavailable`. Request validation errors
become 422 with the offending fields named in both `message` and `fields` (each with the
pydantic error `type` as its `code`); a body that is not JSON is a 422 naming the line and
column, one sent without `Content-Type: application/json` a 415 saying so; anything unexpected is a 500 in the same envelope. A 429 or 503 carries
`Retry-After`. Every message is rendered in the language negotiated for the request
(`api/language.py`): `Accept-Language`, else `[server] locale`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from callout_server.api.language import request_locale
from callout_server.db.engine import DatabaseDown
from callout_server.errors import ApiError, UnsupportedMediaType
from callout_server.i18n import (
    COLON,
    SEMICOLON,
    Locale,
    Msg,
    field_message,
    json_reason,
    msg,
    text,
)


class MessageHTTPException(StarletteHTTPException):
    """An HTTP error of the web kit's own (not a domain error) with a catalogue message."""

    def __init__(self, status_code: int, code: str, message: Msg) -> None:
        super().__init__(status_code, str(message))
        self.code = code
        self.msg = message


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    return ".".join(parts) or "body"


def _json_error(error: dict[str, Any], doc: Any, locale: Locale) -> dict[str, Any]:
    """A body that is not JSON: name the line and column, not a character offset."""
    pos = error["loc"][-1] if isinstance(error["loc"][-1], int) else 0
    source = doc if isinstance(doc, str) else ""
    line = source.count("\n", 0, pos) + 1
    column = pos - (source.rfind("\n", 0, pos) + 1) + 1
    reason = json_reason(str((error.get("ctx") or {}).get("error", "")), locale)
    return {"field": "body", "code": "json_invalid",
            "message": text("json_invalid_at", locale, line=line, column=column, reason=reason)}


def field_error(error: dict[str, Any], locale: Locale) -> dict[str, Any]:
    """One pydantic error as a `fields` entry: the field, the error type, the message."""
    return {"field": _field_path(tuple(error.get("loc", ()))),
            "code": str(error.get("type", "value_error")),
            "message": field_message(error, locale)}


def validation_error_body(fields: list[dict[str, Any]], locale: Locale) -> dict[str, Any]:
    summary = SEMICOLON[locale].join(f"{f['field']}{COLON[locale]}{f['message']}"
                                     for f in fields[:5])
    return {"error": {"code": "validation_error",
                      "message": text("invalid_request", locale, summary=summary),
                      "fields": fields}}


def error_headers(exc: ApiError) -> dict[str, str] | None:
    if exc.status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if exc.status in (429, 503):
        wait = exc.extra.get("retry_after_s") or exc.retry_after_s or 1
        return {"Retry-After": str(int(wait))}
    return None


# Seconds a client is told to wait while the database is away (the poll probes every second).
DATABASE_RETRY_AFTER_S = 2


def database_unavailable_body(locale: Locale) -> dict[str, Any]:
    return {"error": {"code": "database_unavailable",
                      "message": text("database_unavailable", locale)}}


def internal_error_body(locale: Locale) -> dict[str, Any]:
    return {"error": {"code": "internal_error", "message": text("internal_error", locale)}}


# Starlette's own HTTP errors: status -> (code, catalogue key).
_HTTP_ERRORS = {400: ("invalid_body", "invalid_body"), 404: ("not_found", "not_found"),
                405: ("method_not_allowed", "method_not_allowed")}


def _is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def _not_json(request: Request, exc: RequestValidationError) -> UnsupportedMediaType | None:
    """A body FastAPI did not read as JSON because of its Content-Type (missing, or curl's
    form default): say so, instead of "body should be a JSON object"."""
    content_type = request.headers.get("content-type", "")
    if _is_json(content_type):
        return None
    # FastAPI hands the body on as raw bytes when the header does not say JSON.
    if not isinstance(exc.body, bytes | bytearray) or not exc.body:
        return None
    if not any(tuple(e.get("loc", ()))[:1] == ("body",) for e in exc.errors()):
        return None
    got: str | Msg = content_type[:100] if content_type else msg("content_type_none")
    return UnsupportedMediaType(msg("content_type_json", got=got))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(request_locale(request)), status_code=exc.status,
                            headers=error_headers(exc))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette's ServerErrorMiddleware calls this, sends the answer, then re-raises so
        # the server logs the traceback: the client gets the envelope, never a bare text.
        return JSONResponse(internal_error_body(request_locale(request)), status_code=500)

    @app.exception_handler(DatabaseDown)
    async def _database_down(request: Request, exc: DatabaseDown) -> JSONResponse:
        # The one answer of every route whose unit of work met a database that cannot serve
        # (db/engine.py translates the driver's errors): 503, the client may retry shortly.
        return JSONResponse(database_unavailable_body(request_locale(request)), status_code=503,
                            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)})

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Input values are not echoed back: they may hold an API key.
        locale = request_locale(request)
        unsupported = _not_json(request, exc)
        if unsupported is not None:
            return JSONResponse(unsupported.body(locale), status_code=unsupported.status)
        fields = [_json_error(e, exc.body, locale) if e.get("type") == "json_invalid"
                  else field_error(e, locale) for e in exc.errors()]
        return JSONResponse(validation_error_body(fields, locale), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # 400 is FastAPI's "There was an error parsing the body" (e.g. not UTF-8).
        locale = request_locale(request)
        known = _HTTP_ERRORS.get(exc.status_code)
        if isinstance(exc, MessageHTTPException):  # the edge's 413
            code, message = exc.code, exc.msg.render(locale)
        elif known is not None:
            code, message = known[0], text(known[1], locale)
        else:
            code, message = "http_error", str(exc.detail)
        return JSONResponse({"error": {"code": code, "message": message}},
                            status_code=exc.status_code)
