"""Errors every tier shares."""

from __future__ import annotations

from callout_server.errors import ApiError
from callout_server.llm.diagnostics import Diagnostic

# Diagnostic codes that mean "ran out of time": 504 rather than 502, end reason `timeout`.
TIMEOUT_CODES = frozenset({"timeout", "deadline_exceeded"})


class ModelCallFailed(ApiError):
    """A tier's model call failed with nothing to fall back on: 502, or 504 for time.

    The error body carries the diagnostic, the same object ops find in the call log.
    """

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message, code=diagnostic.code,
                         status=504 if diagnostic.code in TIMEOUT_CODES else 502,
                         diagnostic=diagnostic.to_dict())
        self.diagnostic = diagnostic
