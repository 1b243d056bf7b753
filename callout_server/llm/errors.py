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

    def __init__(self, diagnostic: Diagnostic, *, retry_after_s: float | None = None) -> None:
        super().__init__(f"{diagnostic.code}: {diagnostic.message}")
        self.diagnostic = diagnostic
        # The vendor's `Retry-After` on a 429/503, in seconds: how long to leave it alone.
        self.retry_after_s = retry_after_s

    @property
    def code(self) -> str:
        return self.diagnostic.code

    @property
    def retryable(self) -> bool:
        d = self.diagnostic
        if d.code == "upstream_error":
            return d.status in RETRYABLE_STATUS or d.finish_reason in RETRYABLE_FINISH
        return d.code in RETRYABLE_CODES

    @property
    def endpoint_fault(self) -> bool:
        """The endpoint, not the request, failed: another replica may well answer.

        Connect errors, 5xx, 408/429 and time limits (first byte or token, stalls) count
        against an endpoint's health; other 4xx, truncation and invalid output are the
        request's own fault and are neither counted nor retried elsewhere.
        """
        d = self.diagnostic
        if d.code in ("connect_error", "timeout"):
            return True
        if d.code == "upstream_error":
            status = d.status or 0
            return (status >= 500 or status in (408, 429)
                    or (status == 200 and d.finish_reason in RETRYABLE_FINISH))
        return False
