"""Vendor error bodies, and the one exception the request path raises to send them.

    VendorError            raised by validation (persona rules) or a scripted ``status``;
                           the route renders it with the persona's error style.

Each style reproduces the *shape* a vendor answers with (field names and nesting), because
clients parse these bodies to classify errors. Codes and texts for statuses other than the
documented ones are representative, not verbatim.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

ErrorBody = dict[str, Any]
ErrorStyle = Callable[[int, str, str | None, str | None], ErrorBody]


class VendorError(Exception):
    """A request the vendor would refuse; rendered by the persona's :data:`ErrorStyle`."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code


_DEFAULT_TEXT = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    404: "The model does not exist.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}


def default_message(status: int) -> str:
    return _DEFAULT_TEXT.get(status, f"HTTP {status}")


def _by_status(status: int, table: dict[int, str], fallback: str) -> str:
    if status in table:
        return table[status]
    return table.get(500, fallback) if status >= 500 else fallback


def _openai(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {401: "invalid_request_error", 429: "requests", 500: "server_error"},
        "invalid_request_error",
    )
    if code is None and status == 429:
        code = "rate_limit_exceeded"
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _deepseek(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {401: "authentication_error", 429: "rate_limit_error", 500: "api_error"},
        "invalid_request_error",
    )
    return {"error": {"message": message, "type": kind, "param": param, "code": code or kind}}


def _dashscope(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {401: "invalid_api_key", 429: "limit_requests", 500: "internal_error"},
        "invalid_request_error",
    )
    default_code = "invalid_parameter_error" if status == 400 else kind
    return {
        "error": {"message": message, "type": kind, "param": param, "code": code or default_code},
        "id": f"chatcmpl-{uuid.uuid4()}",
        "request_id": str(uuid.uuid4()),
    }


def _siliconflow(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    # SiliconFlow answers with a flat numeric-code object, not OpenAI's nested "error".
    num = _by_status(status, {401: "20001", 429: "50603", 500: "50507"}, "20015")
    return {"code": int(code) if code and code.isdigit() else int(num), "message": message,
            "data": None}


def _openrouter(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    return {"error": {"code": status, "message": message, "metadata": {}}}


def _ollama(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(status, {404: "not_found_error", 500: "api_error"}, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _zai(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    # Zhipu business codes: 1210 bad parameter, 1302 concurrency limit, 500 internal error.
    num = _by_status(status, {401: "1001", 429: "1302", 500: "500"}, "1210")
    return {"error": {"code": code or num, "message": message}}


def _kimi(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status,
        {401: "invalid_authentication_error", 429: "rate_limit_reached_error",
         500: "server_error", 503: "engine_overloaded_error"},
        "invalid_request_error",
    )
    return {"error": {"message": message, "type": code or kind}}


def _ark(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {401: "Unauthorized", 429: "TooManyRequests", 500: "InternalServerError"},
        "BadRequest",
    )
    default_code = _by_status(
        status,
        {401: "AuthenticationError", 429: "RateLimitExceeded.EndpointRPMExceeded",
         500: "InternalServiceError", 503: "ServerOverloaded"},
        "InvalidParameter",
    )
    return {"error": {"code": code or default_code, "message": message, "param": param or "",
                      "type": kind}}


def _vllm(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {404: "NotFoundError", 500: "InternalServerError"}, "BadRequestError"
    )
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


def _sglang(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    # SGLang still uses the pre-2025 flat vLLM shape.
    kind = _by_status(status, {500: "InternalServerError"}, "BadRequestError")
    return {"object": "error", "message": message, "type": kind, "param": param, "code": status}


def _llamacpp(status: int, message: str, param: str | None, code: str | None) -> ErrorBody:
    kind = _by_status(
        status, {401: "authentication_error", 500: "server_error", 503: "unavailable_error"},
        "invalid_request_error",
    )
    return {"error": {"code": status, "message": message, "type": kind}}


STYLES: dict[str, ErrorStyle] = {
    "openai": _openai,
    "deepseek": _deepseek,
    "dashscope": _dashscope,
    "siliconflow": _siliconflow,
    "openrouter": _openrouter,
    "ollama": _ollama,
    "zai": _zai,
    "kimi": _kimi,
    "ark": _ark,
    "vllm": _vllm,
    "sglang": _sglang,
    "llamacpp": _llamacpp,
}
