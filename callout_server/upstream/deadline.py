"""The limits on one model call, in one place: which fires first, and what it reports.

    limit                       held by                     reported as (code / reason)
    the call's deadline         Call.complete (this module) deadline_exceeded / deadline
    an attempt's total time     LLMClient, per request      timeout / total_timeout
                                (req.timeout_s, else the     (streams: stream_total)
                                configuration's timeout_s)
    a stream's first token,     LLMStream                   timeout / ttft, stalled
    then each gap               (ttft_timeout_s, read_timeout_s)
    a probe's share             Call (PROBE_SHARE of what   timeout / probe_timeout
                                is left)
    a free slot                 Call.next_target (half of   timeout / pool_busy
                                what is left, all of it on
                                the last configuration)

The deadline is the whole call's, failover and hedging included: the NLU tier's
`deadline_ms`, else the configuration's `timeout_s` (chat and scripts set none: their
attempts' limits are all there is). Every other limit is one attempt's and lies inside it.
An attempt limit shorter than what is left fires first and moves the call on (a timeout is
the endpoint's fault); the deadline ends the call. When both are equally long (an NLU node
without `deadline_ms`), the deadline was set first and fires first: `deadline_exceeded`.
An attempt the deadline cuts is marked on its endpoint as `timeout / cut_deadline`.
"""

from __future__ import annotations

import asyncio

from callout_server.llm import Diagnostic, Locale, TimeLimit, time_limit_at

# A probe while other endpoints could still answer gets at most this share of what is left,
# so a replica that came back hanging cannot eat the caller's whole deadline.
PROBE_SHARE = 0.5
# A call cancelled with this little of its deadline left was cut by the deadline.
DEADLINE_SLACK_S = 0.005


class Deadline:
    """When a call must be over, on the loop clock (`seconds` None: no overall limit)."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float | None, *, spent_s: float = 0.0) -> None:
        """`spent_s`: of `seconds`, what the caller already spent before the call began (a
        request's body arriving, a busy loop): the deadline is the caller's, from its start."""
        self.seconds = seconds
        self.at = (None if seconds is None
                   else asyncio.get_running_loop().time() + seconds - spent_s)

    def remaining(self) -> float | None:
        if self.at is None:
            return None
        return self.at - asyncio.get_running_loop().time()

    def expired(self) -> bool:
        """The deadline has passed: a cancellation now is the deadline's."""
        left = self.remaining()
        return left is not None and left <= DEADLINE_SLACK_S

    def probe_limit(self) -> float | None:
        """Seconds a probe may take when others could answer: a share of what is left."""
        left = self.remaining()
        return None if left is None else max(left * PROBE_SHARE, 0.0)

    def scope(self) -> TimeLimit:
        """The time limit that ends the call at the deadline (none without one): the shared
        loop timer's (llm/timeouts.py), one of these per decision."""
        return time_limit_at(self.at)

    def exceeded(self, locale: Locale, max_tokens: int | None) -> Diagnostic:
        assert self.seconds is not None
        return Diagnostic.make("deadline_exceeded", locale, reason="deadline",
                               args={"deadline_ms": round(self.seconds * 1000)},
                               max_tokens=max_tokens)
