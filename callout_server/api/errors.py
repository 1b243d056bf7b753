"""The contract's error body, rendered in one place.

    ApiError                      any domain error with a status and a stable code
      NotFound (404), Conflict (409), Unauthorized (401), Forbidden (403),
      ServiceUnavailable (503), UnprocessableEntity (422)

Services raise these (or subclasses); one handler renders
`{"error": {"code", "message", ...}}`. Request validation errors become 422 with the
offending fields named in both `message` and `fields`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class UnprocessableEntity(ApiError):
    status, code = 422, "validation_error"


class ServiceUnavailable(ApiError):
    status, code = 503, "service_unavailable"


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    return ".".join(parts) or "body"


def validation_error_body(errors: list[dict[str, Any]]) -> dict[str, Any]:
    fields = [{"field": _field_path(tuple(e.get("loc", ()))), "message": e.get("msg", "")}
              for e in errors]
    summary = "; ".join(f"{f['field']}: {f['message']}" for f in fields[:5])
    return {"error": {"code": "validation_error", "message": f"invalid request: {summary}",
                      "fields": fields}}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        # Input values are not echoed back: they may hold an API key.
        errors = [{"loc": e.get("loc", ()), "msg": e.get("msg", "")} for e in exc.errors()]
        return JSONResponse(validation_error_body(errors), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": {"code": code, "message": str(exc.detail)}},
                              status_code=exc.status_code)
