"""The errors every floor above the client raises, and nothing about HTTP framing.

    ApiError                      any domain error with a status and a stable code
      NotFound (404), Conflict (409), Unauthorized (401), Forbidden (403),
      UnsupportedMediaType (415), UnprocessableEntity (422), ServiceUnavailable (503, Retry-After)

Services raise these (or subclasses) and carry their HTTP status with them (an expected
conflict is a 409, never a 500); `callout_server.api.errors` is the one place that renders
them as the contract's body `{"error": {"code", "message", ...}}`. Neutral on purpose:
domain code imports this module, never the web layer.

Messages are `i18n.Msg` values (a catalogue key and its values), rendered in the caller's
language when the body is written; `message` is the English text, for logs.
"""

from __future__ import annotations

from typing import Any

from callout_server.i18n import Locale, Renderable, render_value


class ApiError(Exception):
    status: int = 400
    code: str = "bad_request"
    # Seconds a client should wait before trying again (sent as Retry-After on 429/503).
    retry_after_s: int | None = None

    def __init__(self, message: Renderable | str, *, code: str | None = None,
                 status: int | None = None, **extra: Any) -> None:
        super().__init__(str(message))
        # A plain string still renders (the same in every language); tests/test_i18n.py
        # refuses one in the code base, so it only happens in code that predates the catalogue.
        self.msg: Renderable = _Same(message) if isinstance(message, str) else message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.extra = extra

    @property
    def message(self) -> str:
        return str(self.msg)

    def body(self, locale: Locale = "en") -> dict[str, Any]:
        """The contract's error body, every message in it rendered in `locale`."""
        return {"error": {"code": self.code, "message": self.msg.render(locale),
                          **render_value(self.extra, locale)}}


class _Same:
    def __init__(self, text: str) -> None:
        self.text = text

    def render(self, locale: Locale) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"


class UnprocessableEntity(ApiError):
    status, code = 422, "validation_error"


class ServiceUnavailable(ApiError):
    status, code = 503, "service_unavailable"
    retry_after_s = 5
