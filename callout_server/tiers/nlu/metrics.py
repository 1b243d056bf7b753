"""What the dialers were answered: the model's decision, the fallback intent, or an error.

`callout_llm_requests_total` counts model calls by code; this counts live decisions by what
answered them, so the fallback rate is one ratio. Shadow-evaluation replays are not here.
"""

from __future__ import annotations

from typing import Literal

from prometheus_client import Counter

Outcome = Literal["model", "fallback", "error"]
OUTCOMES: tuple[Outcome, ...] = ("model", "fallback", "error")

DECISIONS = Counter("callout_nlu_decisions_total",
                    "Live NLU decisions by what answered: the model, the node's fallback "
                    "intent, or an error (no fallback_intent: 502/504)", ["outcome"])
# Every series from the start (a ratio needs its zeros), its child bound once.
_MODEL, _FALLBACK, _ERROR = (DECISIONS.labels(outcome) for outcome in OUTCOMES)


def counted(fallback: bool | None) -> None:
    """One live decision: `fallback` from the answer, None when it was an error."""
    (_ERROR if fallback is None else _FALLBACK if fallback else _MODEL).inc()
