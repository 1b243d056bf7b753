"""The redactor's one failure type.

    RedactionError      any failure inside `Redactor.redact` / `redact_value`: a bug, an
                        unsupported value type, a text over the size bound. `code` is stable.

The message names the stage and the reason only, never the text or a found value: the text is
personal data by assumption, and the exception is meant to be logged. The redactor never
returns a partly redacted text: it builds the result whole or raises this. What to store
instead (`redaction_failed`) is the caller's decision (fail closed).
"""

from __future__ import annotations


class RedactionError(Exception):
    """Redaction did not complete; nothing of the input may be stored as it was."""

    code = "redaction_failed"

    def __init__(self, reason: str) -> None:
        super().__init__(f"{self.code}: {reason}")
        self.reason = reason
