"""What one model call did, described once, by the floor that made the call.

    served.report              a usable answer (one request, failover or a hedge race)
    UpstreamError.report       no usable answer anywhere (the deadline included)
    call.report(diagnostic)    a call its caller ended (cancelled): where it had got to
    stream.report(diagnostic)  a streamed call, once its consumer is done with it

Every tier hands its calls' reports to the call log (`calllog.record_call`), adding only
what is its own (call_id, node_id, an NLU decision's inputs, the source); nothing above
this floor copies a field of a model call by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from callout_server.llm import Diagnostic, LLMConfig, Usage


@dataclass(frozen=True, slots=True)
class CallReport:
    """One model call: who answered, what it took, how long, the verdict."""

    config: LLMConfig  # the configuration that answered (a fallback's), or where it ended
    endpoint: str | None  # the base URL of the last attempt, credentials masked; None: none
    attempts: int  # requests sent: 1 when nothing was retried or hedged
    vendor: str  # the dialect that shaped the request (`Dialect.name`)
    diagnostic: Diagnostic | None  # None: a clean answer
    latency_ms: float  # from the start of the call to this report, failed attempts included
    usage: Usage | None = None  # what the vendor reported (a failed call often has none)
    finish_reason: str | None = None
    max_tokens: int | None = None  # the output budget the request sent
    ttft_ms: float | None = None  # streams: what the listener waited for the first token
    variant: str | None = None  # the side of a running canary its route was (Route.variant)

    def judged(self, diagnostic: Diagnostic | None) -> CallReport:
        """The same call with its caller's verdict: an answer that is no decision (NLU)."""
        return replace(self, diagnostic=diagnostic)
