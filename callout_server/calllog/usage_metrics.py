"""Prometheus series per service key and campaign: calls, tokens and cost.

Labels are bounded: `key` is a service key's id (keys are made by admins, a handful to a few
hundred), `campaign` a key's campaign (set by admins, 64 characters at most); "" for calls
without a key (the environment's token, console users). Never a call id, a model name or
anything a dialer sends.
"""

from __future__ import annotations

from typing import Any

from callout_server.calllog.metrics import add_tokens
from callout_server.calllog.records import CallRecord
from callout_server.calllog.tallies import Counters

# Plain numbers, exported on a scrape (tallies.py): added to by every record.
KEY_CALLS = Counters("callout_key_calls", "Model calls by service key, campaign and tier",
                     ["key", "campaign", "tier"])
KEY_TOKENS = Counters("callout_key_tokens",
                      "Vendor-reported tokens by service key, campaign and kind",
                      ["key", "campaign", "kind"])
KEY_COST = Counters("callout_key_cost", "Cost of model calls by service key, campaign "
                    "and currency (configuration prices)", ["key", "campaign", "currency"])


class _KeySeries:
    """One (key, campaign, tier)'s children, bound once (four dict lookups saved a record)."""

    __slots__ = ("calls", "completion", "cost", "labels", "prompt", "reasoning")

    def __init__(self, key: str, campaign: str, tier: str) -> None:
        self.labels = (key, campaign)  # the cost children's, with their currency
        self.calls = KEY_CALLS.labels(key, campaign, tier)
        self.prompt = KEY_TOKENS.labels(key, campaign, "prompt")
        self.completion = KEY_TOKENS.labels(key, campaign, "completion")
        self.reasoning = KEY_TOKENS.labels(key, campaign, "reasoning")
        self.cost: dict[str, Any] = {}  # currency -> child


# Bounded as the labels are (the keys admins made, their campaigns, three tiers).
_SERIES: dict[tuple[int | None, str | None, str], _KeySeries] = {}


def observe(rec: CallRecord) -> None:
    at = (rec.key_id, rec.campaign, rec.tier)
    series = _SERIES.get(at)
    if series is None:
        key = str(rec.key_id) if rec.key_id is not None else ""
        series = _SERIES[at] = _KeySeries(key, rec.campaign or "", rec.tier)
    series.calls.inc()
    add_tokens(series, rec)
    if rec.cost and rec.currency:
        cost = series.cost.get(rec.currency)
        if cost is None:
            cost = series.cost[rec.currency] = KEY_COST.labels(*series.labels, rec.currency)
        cost.inc(rec.cost)
