"""Customers' personal data out of an evaluation's per-call rows before they are written.

A row quotes the recorded call (utterance, slots, intents: already redacted when the call's
inputs were, but not on rows recorded before redaction existed) and the candidate's answer
(slots a model produced from them). Agreement is computed before (`result_row`), so it
compares what was answered. Fail closed: a text the redactor fails on is stored as NULL and
`redacted` says `redaction_failed`.
"""

from __future__ import annotations

from typing import Any

from callout_server.calllog.backfill import Target
from callout_server.evaluation.models import EvaluationResult
from callout_server.privacy import Privacy, merge

TEXT_COLUMNS = ("utterance", "recorded_intent", "candidate_intent", "call_id", "node_id",
                "recorded_global_intent", "candidate_global_intent")
JSON_COLUMNS = ("recorded_slots", "candidate_slots")
# Rows stored before redaction ran, for `callout-server redact-stored`.
STORED = Target(EvaluationResult, TEXT_COLUMNS, JSON_COLUMNS)


def redact_row(row: dict[str, Any], guard: Privacy) -> dict[str, Any]:
    if not guard.enabled:
        return row
    out: dict[str, Any] = dict(row)
    tally: dict[str, int] = {}
    for name in TEXT_COLUMNS:
        out[name], found = guard.text(row.get(name))
        merge(tally, found)
    for name in JSON_COLUMNS:
        out[name], found = guard.value(row.get(name))
        merge(tally, found)
    out["redacted"] = tally
    return out


def redact_rows(rows: list[dict[str, Any]], guard: Privacy) -> list[dict[str, Any]]:
    return [redact_row(row, guard) for row in rows]
