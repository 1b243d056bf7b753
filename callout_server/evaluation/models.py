"""Tables of shadow evaluations (migration 0008_evaluations)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import SCHEMA, Base, UTCDateTime

BigId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class Evaluation(Base):
    __tablename__ = "evaluations"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)  # running|done|cancelled|failed
    candidate_id: Mapped[int] = mapped_column(Integer, nullable=False)
    candidate_name: Mapped[str | None] = mapped_column(String(128))
    candidate_model: Mapped[str | None] = mapped_column(String(256))
    since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    node_id: Mapped[str | None] = mapped_column(String(200))
    limit: Mapped[int] = mapped_column(Integer, nullable=False)
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    done: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # Set once the run ends: aggregates only (no customer text), kept after the results go.
    summary: Mapped[dict[str, Any] | None] = mapped_column(Json)
    reason: Mapped[str | None] = mapped_column(Text)
    # "<host>:<pid>" of the worker running it, and when that worker last reported.
    owner: Mapped[str | None] = mapped_column(String(200))
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False,
                                                   server_default=false())
    created_by: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_evaluations_status", "status"),)


class EvaluationResult(Base):
    """One replayed call: the recorded decision beside the candidate's. Quotes customers'
    words (utterance, slot values): purged with the NLU inputs, by the recorded call's time."""

    __tablename__ = "evaluation_results"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    evaluation_id: Mapped[int] = mapped_column(
        BigId, ForeignKey(f"{SCHEMA}.evaluations.id", ondelete="CASCADE"), nullable=False)
    input_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    call_id: Mapped[str | None] = mapped_column(String(200))
    node_id: Mapped[str | None] = mapped_column(String(200))
    utterance: Mapped[str | None] = mapped_column(Text)
    recorded_intent: Mapped[str | None] = mapped_column(Text)
    recorded_slots: Mapped[dict[str, Any] | None] = mapped_column(Json)
    recorded_fallback: Mapped[bool] = mapped_column(Boolean, nullable=False)
    recorded_code: Mapped[str] = mapped_column(String(40), nullable=False)
    recorded_latency_ms: Mapped[float | None] = mapped_column(Float)
    candidate_intent: Mapped[str | None] = mapped_column(Text)
    candidate_slots: Mapped[dict[str, Any] | None] = mapped_column(Json)
    candidate_fallback: Mapped[bool] = mapped_column(Boolean, nullable=False)
    candidate_code: Mapped[str] = mapped_column(String(40), nullable=False)
    candidate_latency_ms: Mapped[float | None] = mapped_column(Float)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    reasoning_tokens: Mapped[int | None] = mapped_column(Integer)
    # The global intent each side's model named (migration 0016_guard_counts), else NULL.
    recorded_global_intent: Mapped[str | None] = mapped_column(Text)
    candidate_global_intent: Mapped[str | None] = mapped_column(Text)
    intent_agrees: Mapped[bool | None] = mapped_column(Boolean)  # None: no intents offered
    slots_agree: Mapped[bool | None] = mapped_column(Boolean)  # None: no slots asked
    agrees: Mapped[bool] = mapped_column(Boolean, nullable=False)
    # What redaction replaced in this row: {kind: count}; NULL before it ran (0010_privacy).
    redacted: Mapped[dict[str, int] | None] = mapped_column(Json)

    __table_args__ = (
        Index("ix_evaluation_results_evaluation_id_agrees_id", "evaluation_id", "agrees", "id"),
        Index("ix_evaluation_results_at", "at"),
    )
