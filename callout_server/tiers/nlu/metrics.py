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
for _outcome in OUTCOMES:  # every series from the start: a ratio needs its zeros
    DECISIONS.labels(_outcome)


def counted(fallback: bool | None) -> None:
    """One live decision: `fallback` from the answer, None when it was an error."""
    DECISIONS.labels("error" if fallback is None else "fallback" if fallback else "model").inc()


SCREENS = Counter("callout_nlu_screens_total",
                  "Call screenings by who answered, the carrier's status (none: not a "
                  "carrier, or its status unheard) and what answered (rule, model, fallback)",
                  ["answered_by", "carrier_status", "source"])


def screened(answered_by: str, carrier_status: str | None, source: str) -> None:
    """One screening answer; every label is one of the contract's closed sets."""
    SCREENS.labels(answered_by, carrier_status or "none", source).inc()
