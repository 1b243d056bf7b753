"""Customers' personal data out of call-log records, in the writer, off the request path.

The request path hands the writer records as the call left them (`record()` only cleans and
queues them). Before a batch is written, `prepare(batch, privacy)` redacts every record not
yet redacted, in a worker thread (`asyncio.to_thread`: the event loop keeps serving
decisions while the batch is redacted; bench/README.md has the figures), and the results are
applied on the loop once the thread is done, so a cancelled preparation leaves the records
as they were (not yet redacted, `redacted` None) and never half changed.

What is redacted: the record's text columns (`message`, `advice`, `detail`: a vendor's error
body may echo the prompt; `call_id`, `node_id`: a dialer might name a call by the callee's
number), its `reason_args`, and an NLU decision's inputs and decision (utterance, context,
intents, slots, instructions; the slot values answered). Fail closed: a text the redactor
fails on is stored as NULL, inputs it fails on are not stored at all, and the record's
`redacted` says `redaction_failed`. A record is redacted once (`redacted` set): a card
pseudonym cannot be told from a card, so redacting twice would change it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from callout_server.calllog.inputs import decision_json, request_json
from callout_server.calllog.records import TEXT_LIMITS, CallRecord, storable_text
from callout_server.privacy import FAILED, Privacy, Tally, merge

TEXT_FIELDS = ("message", "advice", "detail", "call_id", "node_id")
# Records redacted between two yields to the event loop (each ~0.05-0.3 ms).
SLICE = 16
# Batches of THREAD_FROM records or more are redacted in a worker thread: it measured the
# least event-loop lag of the three ways (bench/bench_privacy.py); fewer cost less than a hop.
IN_THREAD = True
THREAD_FROM = 8


@dataclass(slots=True)
class Prepared:
    """A record's redacted values, applied on the loop (`apply`)."""

    texts: dict[str, str | None]
    reason_args: dict[str, Any] | None
    input_values: dict[str, Any] | None  # None: no inputs, or not storable (failed)
    tally: Tally


def redact_record(rec: CallRecord, privacy: Privacy) -> Prepared:
    """The record's values redacted; reads the record, changes nothing. Whatever fails
    inside, nothing of it is kept as it was."""
    try:
        return _redact_record(rec, privacy)
    except Exception:
        texts: dict[str, str | None] = dict.fromkeys(TEXT_FIELDS)
        return Prepared(texts, None, None, {FAILED: 1})


def _redact_record(rec: CallRecord, privacy: Privacy) -> Prepared:
    tally: Tally = {}
    texts: dict[str, str | None] = {}
    for name in TEXT_FIELDS:
        value = getattr(rec, name)
        if value:
            text, found = privacy.text(value)
            merge(tally, found)
            if text is not None and len(text) > TEXT_LIMITS[name]:
                text = storable_text(text, TEXT_LIMITS[name])
            texts[name] = text
    reason_args = rec.reason_args
    if reason_args:
        reason_args, found = privacy.value(reason_args)
        merge(tally, found)
    input_values = None
    if rec.inputs is not None:
        # request_json's and decision_json's texts, already storable (the common path: one
        # dump each, no walk)
        request = orjson.loads(request_json(rec.inputs.request))
        inputs, found_in = privacy.value(request)
        decision, found_out = privacy.value(orjson.loads(decision_json(rec.inputs.decision)))
        merge(tally, found_in)
        merge(tally, found_out)
        if inputs is not None and decision is not None:
            input_values = {"inputs": orjson.dumps(inputs).decode(),
                            "decision": orjson.dumps(decision).decode(),
                            "redacted": orjson.dumps(merge(dict(found_in), found_out)).decode()}
    return Prepared(texts, reason_args, input_values, tally)


def apply(rec: CallRecord, done: Prepared) -> None:
    for name, value in done.texts.items():
        setattr(rec, name, value)
    rec.reason_args = done.reason_args
    if rec.inputs is not None and done.input_values is None:
        rec.inputs = None  # fail closed: the inputs are not stored at all
    rec.input_values = done.input_values
    rec.redacted = done.tally


def _redact_all(batch: Sequence[CallRecord], privacy: Privacy) -> list[Prepared]:
    return [redact_record(rec, privacy) for rec in batch]


async def prepare(batch: Sequence[CallRecord], privacy: Privacy, *,
                  in_thread: bool = IN_THREAD) -> None:
    """Redact the records of `batch` not yet redacted (no-op with `redact = false`).

    In a worker thread (`in_thread`, the default, from `THREAD_FROM` records), else on the
    loop `SLICE` records at a time with a yield between slices. Redacting a whole batch at
    once on the loop would hold every waiting decision for tens of ms (bench/README.md,
    "Privacy")."""
    if not privacy.enabled:
        return
    todo = [rec for rec in batch if rec.redacted is None]
    if not todo:
        return
    if in_thread and len(todo) >= THREAD_FROM:
        results = await asyncio.to_thread(_redact_all, todo, privacy)
    else:
        results = []
        for at in range(0, len(todo), SLICE):
            if at:
                await asyncio.sleep(0)  # let waiting requests run between slices
            results += _redact_all(todo[at:at + SLICE], privacy)
    for rec, done in zip(todo, results, strict=True):
        apply(rec, done)
