"""Errors every tier shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from callout_server.errors import ApiError
from callout_server.i18n import Locale
from callout_server.llm import Diagnostic

# Diagnostic codes that mean "ran out of time": 504 rather than 502, end reason `timeout`.
TIMEOUT_CODES = frozenset({"timeout", "deadline_exceeded"})


class ModelCallFailed(ApiError):
    """A tier's model call failed with nothing to fall back on: 502, or 504 for time.

    The error body carries the diagnostic, the same object ops find in the call log, in
    the caller's language.
    """

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(_Said(diagnostic), code=diagnostic.code,
                         status=504 if diagnostic.code in TIMEOUT_CODES else 502)
        self.diagnostic = diagnostic

    def body(self, locale: Locale = "en") -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.diagnostic.message_in(locale),
                          "diagnostic": self.diagnostic.to_dict(locale)}}


@dataclass(frozen=True, slots=True)
class _Said:
    """A diagnostic's message as an error message (rendered per caller)."""

    diagnostic: Diagnostic

    def render(self, locale: Locale) -> str:
        return self.diagnostic.message_in(locale)

    def __str__(self) -> str:
        return self.diagnostic.message_in("en")
