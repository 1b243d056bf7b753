"""A model call's report becomes its call-log record: the one recording call of every tier.

    diagnostic = record_call(recorder, report, "nlu", call_id=..., node_id=...,
                             source="live", inputs=...)

The report (`upstream.CallReport`) says what the call did; the tier adds only what is its
own (its name, call_id, node_id, an NLU decision's inputs, the source); `to_record` is the
one place a report's fields become a record's. What later work adds goes there too: a cost
(from `report.usage` and the configuration's prices), a service key or campaign (a field
the tier passes, beside `call_id`), a canary variant (a field of the report), what a chat
run's speech guard and filler did (`speech`, a field the tier passes), redaction of stored
text (the record's text fields are all set here).

`record_call` hands the record to a `Recorder` (no I/O: the writer queues it; the null
recorder drops it), logs one line when the call failed, and returns the diagnostic carrying
its record id, which the tier hands on so ops can find the record.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol
from urllib.parse import urlsplit

from callout_server.calllog.caller import CALLER, Caller
from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.records import CallRecord, clean_static
from callout_server.llm import Diagnostic
from callout_server.upstream import CallReport

calls_log = logging.getLogger("callout_server.calls")
# A barge-in or a hang-up cancels calls all day long: that is no failure.
QUIET_CODES = frozenset({"cancelled"})
MAX_LOGGED_DETAIL = 200


class Recorder(Protocol):
    """Where records go: the call log's writer (`DiagnosticsRecorder`), or `NULL_RECORDER`."""

    @property
    def keeps_nlu_inputs(self) -> bool: ...

    def record(self, rec: CallRecord) -> int | None: ...


class NullRecorder:
    """Keeps nothing (a tier built without a call log: tests, benchmarks)."""

    keeps_nlu_inputs = False

    def record(self, rec: CallRecord) -> int | None:
        return None


NULL_RECORDER = NullRecorder()


def record_call(recorder: Recorder, report: CallReport, tier: str, *,
                call_id: str | None = None, node_id: str | None = None,
                source: str = "live", inputs: NluInputs | None = None,
                caller: Caller | None = None,
                speech: dict[str, Any] | None = None) -> Diagnostic | None:
    """Record one model call of any tier; returns its diagnostic with the record's id.

    `source` is "evaluation" for a shadow evaluation's replay; `inputs` (an NLU decision's)
    are written beside the record. `caller` (default: the one the service-key gate made
    current, `caller.CALLER`) is told the tokens the vendor counted. `speech` is what a chat
    run's guard and filler did (counts, never a term: `tiers/chat/speech_notes.py`).
    """
    caller = CALLER.get() if caller is None else caller
    rec = to_record(report, tier, call_id=call_id, node_id=node_id, source=source,
                    inputs=inputs, caller=caller, speech=speech)
    if caller is not None:
        tokens = (rec.prompt_tokens or 0) + (rec.completion_tokens or 0)
        if tokens > 0:
            caller.spent(tokens)
    diagnostic = report.diagnostic
    if diagnostic is not None and diagnostic.code not in QUIET_CODES:
        log_failure(rec, report, diagnostic)
    record_id = recorder.record(rec)
    if diagnostic is None or record_id is None:
        return diagnostic
    return diagnostic.with_id(record_id)


def record_rule(recorder: Recorder, tier: str, rule: str, *, call_id: str | None = None,
                node_id: str | None = None, latency_ms: float | None = None,
                args: dict[str, str | None] | None = None) -> int | None:
    """Record a decision the phrase rules made without a model call (`source: "rule"`,
    code `ok`, no model): `rule` names what decided (`screen.carrier.announcement`,
    `global_intent.opt_out`), `args` what it found (the answer, the phrase as configured,
    never the customer's words). Returns the record's id. Not counted as model traffic."""
    return recorder.record(CallRecord(
        tier=tier, code="ok", call_id=call_id, node_id=node_id, latency_ms=latency_ms,
        attempts=0, source="rule", reason=rule,
        reason_args={k: v for k, v in (args or {}).items() if v is not None} or None))


def to_record(report: CallReport, tier: str, *, call_id: str | None = None,
              node_id: str | None = None, source: str = "live",
              inputs: NluInputs | None = None, caller: Caller | None = None,
              speech: dict[str, Any] | None = None) -> CallRecord:
    """The record of `report`, with the tier's own fields.

    A diagnostic is kept as its code and numbers; its numbers (what the call was judged
    on) win over the report's finish reason and budget. Usage the vendor reported wins
    over the diagnostic's counts; a failed call often has none, and then the counts its
    diagnostic carries (e.g. the tokens reasoning ate) are kept. The cost is the
    configuration's price applied to those counts (reasoning tokens priced as output); the
    caller (a service key, its campaign) is stamped on the record.
    """
    cfg, d, usage = report.config, report.diagnostic, report.usage
    # What comes from the configuration and our own code is cleaned once per configuration.
    tier, source, code, model, vendor, endpoint = clean_static(
        tier, source, "ok" if d is None else d.code, cfg.model, report.vendor, report.endpoint)
    rec = CallRecord(
        tier=tier, code=code, model=model, vendor=vendor,  # type: ignore[arg-type]
        config_id=cfg.id, finish_reason=report.finish_reason,
        latency_ms=round(report.latency_ms, 1), ttft_ms=report.ttft_ms,
        max_tokens=report.max_tokens, call_id=call_id, node_id=node_id,
        endpoint=endpoint, attempts=report.attempts, source=source,  # type: ignore[arg-type]
        inputs=inputs, static_clean=True, variant=report.variant, speech=speech)
    if d is not None:
        rec.reason, rec.detail, rec.status = d.reason, d.detail, d.status
        rec.reason_args = dict(d.args) if d.args else None
        if d.finish_reason is not None:
            rec.finish_reason = d.finish_reason
        if d.max_tokens is not None:
            rec.max_tokens = d.max_tokens
        rec.prompt_tokens = d.prompt_tokens
        rec.completion_tokens = d.completion_tokens
        rec.reasoning_tokens = d.reasoning_tokens
    if usage is not None:
        if usage.prompt_tokens is not None:
            rec.prompt_tokens = usage.prompt_tokens
        if usage.completion_tokens is not None:
            rec.completion_tokens = usage.completion_tokens
        if usage.reasoning_tokens is not None:
            rec.reasoning_tokens = usage.reasoning_tokens
    if cfg.price is not None:
        rec.cost = cfg.price.cost(rec.prompt_tokens, rec.completion_tokens, rec.reasoning_tokens)
        rec.currency = cfg.price.currency
    if caller is not None:
        rec.key_id, rec.campaign = caller.key_id, caller.campaign
    return rec


def endpoint_of(base_url: str) -> str:
    """host[:port] of a base URL: never its user:password part, path or query."""
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return "?"
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}" if port else host


def log_failure(rec: CallRecord, report: CallReport, diagnostic: Diagnostic) -> None:
    """One structured line per failed model call, for ops reading the server log.

    The fields are what a record holds, plus the endpoint's host; never the key (the client
    scrubs it from `detail`), never prompts or answers. The text is short; everything else
    is a field (`extra`): JSON lines carry them as keys, text lines as key=value.
    """
    cfg = report.config
    detail = diagnostic.detail
    if detail is not None and len(detail) > MAX_LOGGED_DETAIL:
        detail = detail[:MAX_LOGGED_DETAIL] + "…"
    fields = {
        "event": "model_call_failed", "code": rec.code, "tier": rec.tier,
        "config_id": cfg.id, "config_name": cfg.name,
        "endpoint": endpoint_of(rec.endpoint or cfg.base_url), "attempts": rec.attempts,
        "model": rec.model, "vendor": rec.vendor, "latency_ms": rec.latency_ms,
        "status": rec.status, "finish_reason": rec.finish_reason, "max_tokens": rec.max_tokens,
        "call_id": rec.call_id, "node_id": rec.node_id, "detail": detail,
    }
    calls_log.warning("model call failed: %s", rec.code,
                      extra={k: v for k, v in fields.items() if v is not None})
