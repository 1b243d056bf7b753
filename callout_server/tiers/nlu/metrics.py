"""What the dialers were answered: the model's decision, the fallback intent, or an error.

`callout_llm_requests_total` counts model calls by code; this counts live decisions by what
answered them, so the fallback rate is one ratio. Shadow-evaluation replays are not here.
"""

from __future__ import annotations

from typing import Literal

from prometheus_client import Counter

Outcome = Literal["model", "fallback", "error", "rule"]
OUTCOMES: tuple[Outcome, ...] = ("model", "fallback", "error", "rule")

DECISIONS = Counter("callout_nlu_decisions_total",
                    "Live NLU decisions by what answered: the model, the node's fallback "
                    "intent, an error (no fallback_intent: 502/504), or a global intent's "
                    "phrase rule (no model call)", ["outcome"])
# Every series from the start (a ratio needs its zeros), each child bound once.
_CHILD = {outcome: DECISIONS.labels(outcome) for outcome in OUTCOMES}
_MODEL, _FALLBACK, _ERROR, _RULE = (_CHILD[o] for o in ("model", "fallback", "error", "rule"))


def counted(fallback: bool | None, *, rule: bool = False) -> None:
    """One live decision: `fallback` from the answer, None when it was an error."""
    (_RULE if rule else _ERROR if fallback is None else _FALLBACK if fallback else _MODEL).inc()


MAX_NODES, OTHER_NODE = 200, "_other"
GLOBAL_INTENTS = Counter("callout_nlu_global_intents_total",
                         "Global intents answered, by intent, node and source (rule: a phrase "
                         "rule, no model call; model: named by the model). Nodes past the "
                         f"first {MAX_NODES} a worker saw count as {OTHER_NODE!r}",
                         ["intent", "node", "source"])
_nodes: set[str] = set()


def global_intent(intent: str, node_id: str | None, source: str) -> None:
    """One global intent answered. The labels stay bounded: intent names are the operators'
    list (at most 50 at a time, 64 characters), nodes the first MAX_NODES seen by this
    worker (cut to 64 characters), the rest `_other`; no node is `_none`."""
    node = "_none" if not node_id else node_id[:64]
    if node not in _nodes:
        if len(_nodes) >= MAX_NODES:
            node = OTHER_NODE
        else:
            _nodes.add(node)
    GLOBAL_INTENTS.labels(intent[:64], node, source).inc()


SCREENS = Counter("callout_nlu_screens_total",
                  "Call screenings by who answered, the carrier's status (none: not a "
                  "carrier, or its status unheard) and what answered (rule, model, fallback)",
                  ["answered_by", "carrier_status", "source"])


def screened(answered_by: str, carrier_status: str | None, source: str) -> None:
    """One screening answer; every label is one of the contract's closed sets."""
    SCREENS.labels(answered_by, carrier_status or "none", source).inc()
