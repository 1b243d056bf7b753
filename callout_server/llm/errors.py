"""Exceptions raised by the shared LLM client.

    LLMCallError                  every failure of one model call; carries a Diagnostic
      (code in diagnostic.code: timeout, connect_error, upstream_error, truncated, ...)

httpx exceptions never escape the client: they are translated once, in the client, with
`raise LLMCallError(...) from exc`. Callers branch on `error.diagnostic.code` and
`error.retryable`, never on exception types from the transport.
"""

from __future__ import annotations

from callout_server.llm.diagnostics import Diagnostic

# Codes worth one retry inside a deadline: the next attempt may well succeed.
RETRYABLE_CODES = frozenset({"connect_error", "invalid_json"})
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# Finish reasons with which a vendor says it gave up for now (DeepSeek, Ollama, Z.AI).
RETRYABLE_FINISH = frozenset({"insufficient_system_resource", "load", "network_error"})


class LLMCallError(Exception):
    """A model call that produced no usable answer. `str()` is safe to log: no key, no prompt."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(f"{diagnostic.code}: {diagnostic.message}")
        self.diagnostic = diagnostic

    @property
    def code(self) -> str:
        return self.diagnostic.code

    @property
    def retryable(self) -> bool:
        d = self.diagnostic
        if d.code == "upstream_error":
            return d.status in RETRYABLE_STATUS or d.finish_reason in RETRYABLE_FINISH
        return d.code in RETRYABLE_CODES
