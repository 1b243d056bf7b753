"""The record of one LLM call, as ops read it later."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from callout_server.db.base import utcnow
from callout_server.llm.diagnostics import Diagnostic

# Bounded so one pathological vendor message cannot bloat the log table.
MAX_TEXT = 2000


@dataclass(slots=True)
class CallRecord:
    tier: str
    code: str  # "ok" or a diagnostic code
    model: str | None = None
    vendor: str | None = None
    config_id: int | None = None
    message: str | None = None
    advice: str | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    max_tokens: int | None = None
    status: int | None = None
    call_id: str | None = None
    node_id: str | None = None
    at: datetime = field(default_factory=utcnow)
    id: int | None = None

    @classmethod
    def from_diagnostic(cls, tier: str, diagnostic: Diagnostic | None, **fields: Any) -> CallRecord:
        """A record for a call that ended with `diagnostic` (None: success, code `ok`)."""
        if diagnostic is None:
            return cls(tier=tier, code="ok", **fields)
        numbers = {
            "finish_reason": diagnostic.finish_reason,
            "max_tokens": diagnostic.max_tokens,
            "prompt_tokens": diagnostic.prompt_tokens,
            "completion_tokens": diagnostic.completion_tokens,
            "reasoning_tokens": diagnostic.reasoning_tokens,
            "status": diagnostic.status,
        }
        merged = {k: v for k, v in numbers.items() if v is not None} | fields
        return cls(tier=tier, code=diagnostic.code, message=diagnostic.message,
                   advice=diagnostic.advice, **merged)

    def row(self) -> dict[str, Any]:
        # Not dataclasses.asdict(): it deep-copies every value and cost ~20 µs a record,
        # paid ~1000 times a second by a busy worker's writer.
        values = {name: getattr(self, name) for name in COLUMNS}
        for key in ("message", "advice"):
            if values[key] is not None:
                values[key] = values[key][:MAX_TEXT]
        return values

    def values(self) -> tuple[Any, ...]:
        """The row as a tuple in COLUMNS order (for PostgreSQL's COPY)."""
        row = self.row()
        return tuple(row[name] for name in COLUMNS)


# Column names, in the table's order of the dataclass fields.
COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CallRecord))
