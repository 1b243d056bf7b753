"""Prometheus series per service key and campaign: calls, tokens and cost.

Labels are bounded: `key` is a service key's id (keys are made by admins, a handful to a few
hundred), `campaign` a key's campaign (set by admins, 64 characters at most); "" for calls
without a key (the environment's token, console users). Never a call id, a model name or
anything a dialer sends.
"""

from __future__ import annotations

from prometheus_client import Counter

from callout_server.calllog.records import CallRecord

KEY_CALLS = Counter("callout_key_calls_total", "Model calls by service key, campaign and tier",
                    ["key", "campaign", "tier"])
KEY_TOKENS = Counter("callout_key_tokens_total",
                     "Vendor-reported tokens by service key, campaign and kind",
                     ["key", "campaign", "kind"])
KEY_COST = Counter("callout_key_cost_total", "Cost of model calls by service key, campaign "
                   "and currency (configuration prices)", ["key", "campaign", "currency"])


def observe(rec: CallRecord) -> None:
    key = str(rec.key_id) if rec.key_id is not None else ""
    campaign = rec.campaign or ""
    KEY_CALLS.labels(key, campaign, rec.tier).inc()
    for kind, value in (("prompt", rec.prompt_tokens), ("completion", rec.completion_tokens),
                        ("reasoning", rec.reasoning_tokens)):
        if value:
            KEY_TOKENS.labels(key, campaign, kind).inc(value)
    if rec.cost and rec.currency:
        KEY_COST.labels(key, campaign, rec.currency).inc(rec.cost)
