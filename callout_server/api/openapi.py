"""The OpenAPI document tells the truth about errors: every answer it can give is declared.

Routes declare their own domain errors (404, 409, 502...); the answers every route of a kind
can give come from the layers around them and are added here, in one place:

    any route                    500 internal_error
    a route with a body          400 invalid_body (not UTF-8), 413 payload_too_large,
                                 415 unsupported_media_type (not sent as application/json),
                                 422 validation_error (JSON syntax or fields)
    any /api/ route but login    401 unauthorized (the edge checks credentials first)
    /api/admin/*                 403 forbidden (a service token, or a failed CSRF check)
    any route with parameters    422 validation_error
    /api/admin/*, /api/auth/*    503 database_unavailable (their work, or the console session
                                 the edge looks up, needs the database)

Every error response points at one `Error` schema: the contract's envelope.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict

from callout_server.api.edge import PUBLIC_API_PATHS


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")  # e.g. `fields`, `diagnostic`, `current_version`
    code: str
    message: str


class Error(BaseModel):
    error: ErrorDetail


_DESCRIPTIONS = {
    400: "the body could not be read (not UTF-8)",
    401: "missing or invalid credentials",
    403: "credentials of the wrong kind, or a console write without its CSRF token",
    413: "the body is larger than the route's limit",
    415: "the body was not sent as JSON (Content-Type: application/json)",
    422: "invalid JSON or invalid fields, named in `fields`",
    500: "an unexpected server error (the server log has the details)",
    503: "the database (or another service) is unavailable for now: retry after `Retry-After`",
}
_METHODS = ("get", "put", "post", "delete", "patch")


def _error_ref(status: int) -> dict[str, Any]:
    return {"description": _DESCRIPTIONS.get(status, "error"),
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _statuses(path: str, operation: dict[str, Any]) -> set[int]:
    statuses = {500}
    if "requestBody" in operation:
        statuses |= {400, 413, 415, 422}
    if operation.get("parameters"):
        statuses.add(422)
    if path.startswith("/api/") and path not in PUBLIC_API_PATHS:
        statuses.add(401)
    if path.startswith("/api/admin/"):
        statuses.add(403)
    if path.startswith(("/api/admin/", "/api/auth/")):
        statuses.add(503)
    return statuses


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    error = Error.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(error.pop("$defs", {}))
    components["Error"] = error
    for path, item in schema.get("paths", {}).items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            for status in _statuses(path, operation):
                responses[str(status)] = _error_ref(status)
            for status, response in responses.items():
                # Every error is the envelope, whatever a route declared (`{}`, a loose dict,
                # FastAPI's own `HTTPValidationError`, which this API never sends).
                if status[0] in "45":
                    responses[status] = {**_error_ref(int(status)), "description":
                                         response.get("description") or _DESCRIPTIONS.get(
                                             int(status), "error")}
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)
    return schema


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_errors(get_openapi(
                title=app.title, version=app.version, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
