"""The contract's error body, rendered in one place.

Domain errors (`callout_server.errors.ApiError` and its subclasses) render as
`{"error": {"code", "message", ...}}` with their own status. Request validation errors
become 422 with the offending fields named in both `message` and `fields`; a body that is
not JSON is a 422 naming the line and column; anything unexpected is a 500 in the same
envelope. A 429 or 503 carries `Retry-After`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from callout_server.errors import ApiError


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    return ".".join(parts) or "body"


def _message(error: dict[str, Any]) -> str:
    # pydantic prefixes our validators' words with "Value error, ": noise to a reader.
    return str(error.get("msg", "")).removeprefix("Value error, ")


def _json_error(error: dict[str, Any], doc: Any) -> dict[str, Any]:
    """A body that is not JSON: name the line and column, not a character offset."""
    pos = error["loc"][-1] if isinstance(error["loc"][-1], int) else 0
    text = doc if isinstance(doc, str) else ""
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    reason = (error.get("ctx") or {}).get("error", "not valid JSON")
    return {"loc": ("body",), "msg": f"invalid JSON at line {line} column {column}: {reason}"}


def validation_error_body(errors: list[dict[str, Any]]) -> dict[str, Any]:
    fields = [{"field": _field_path(tuple(e.get("loc", ()))), "message": _message(e)}
              for e in errors]
    summary = "; ".join(f"{f['field']}: {f['message']}" for f in fields[:5])
    return {"error": {"code": "validation_error", "message": f"invalid request: {summary}",
                      "fields": fields}}


def error_headers(exc: ApiError) -> dict[str, str] | None:
    if exc.status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if exc.status in (429, 503):
        wait = exc.extra.get("retry_after_s") or exc.retry_after_s or 1
        return {"Retry-After": str(int(wait))}
    return None


INTERNAL_ERROR = {"error": {"code": "internal_error",
                            "message": "internal server error; the server log has the details"}}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=error_headers(exc))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # Starlette's ServerErrorMiddleware calls this, sends the answer, then re-raises so
        # the server logs the traceback: the client gets the envelope, never a bare text.
        return JSONResponse(INTERNAL_ERROR, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        # Input values are not echoed back: they may hold an API key.
        errors = [_json_error(e, exc.body) if e.get("type") == "json_invalid"
                  else {"loc": e.get("loc", ()), "msg": e.get("msg", "")} for e in exc.errors()]
        return JSONResponse(validation_error_body(errors), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # 400 is FastAPI's "There was an error parsing the body" (e.g. not UTF-8).
        code = {400: "invalid_body", 404: "not_found", 405: "method_not_allowed",
                413: "payload_too_large"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": {"code": code, "message": str(exc.detail)}},
                              status_code=exc.status_code)
