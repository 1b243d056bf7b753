"""Tables of the call log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, Index, Integer, String, Text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime


class LLMCallLog(Base):
    __tablename__ = "llm_call_logs"

    # Ids are handed out from blocks reserved in the background (see ids.py), so a
    # response can name its record before the record is written.
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    tier: Mapped[str] = mapped_column(String(16), nullable=False)
    code: Mapped[str] = mapped_column(String(40), nullable=False)
    config_id: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str | None] = mapped_column(String(200))
    vendor: Mapped[str | None] = mapped_column(String(40))
    message: Mapped[str | None] = mapped_column(Text)
    advice: Mapped[str | None] = mapped_column(Text)
    finish_reason: Mapped[str | None] = mapped_column(String(60))
    latency_ms: Mapped[float | None] = mapped_column(Float)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    reasoning_tokens: Mapped[int | None] = mapped_column(Integer)
    max_tokens: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[int | None] = mapped_column(Integer)
    call_id: Mapped[str | None] = mapped_column(String(200))
    node_id: Mapped[str | None] = mapped_column(String(200))
    # A diagnostic as code + numbers (0005_i18n), worded when read: `message` and `advice`
    # are only filled on records written before.
    reason: Mapped[str | None] = mapped_column(String(40))
    reason_args: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    detail: Mapped[str | None] = mapped_column(Text)
    # The endpoint that served the call (base URL, credentials masked) and the requests it
    # took (retries, hedges); migration 0007_pools.
    endpoint: Mapped[str | None] = mapped_column(String(2048))
    attempts: Mapped[int | None] = mapped_column(Integer)
    # "live", or "evaluation" for a shadow evaluation's replay (never counted as traffic).
    source: Mapped[str] = mapped_column(String(16), nullable=False, server_default="live")
    # What redaction replaced in this record and its inputs: {kind: count}, NULL before
    # redaction ran (migration 0010_privacy; docs/privacy.md).
    redacted: Mapped[dict[str, int] | None] = mapped_column(JSON().with_variant(
        postgresql.JSONB(), "postgresql"))
    # Who the call was made for and what it cost (migration 0013_service_keys): the service
    # key and campaign the caller authenticated with; the configuration's price applied to
    # the tokens the vendor reported (reasoning priced as output).
    key_id: Mapped[int | None] = mapped_column(Integer)
    campaign: Mapped[str | None] = mapped_column(String(64))
    cost: Mapped[float | None] = mapped_column(Float)
    currency: Mapped[str | None] = mapped_column(String(8))
    # The side of a running canary the call was on ("active" | "canary"), migration
    # 0014_canaries; NULL: no canary ran on its tier.
    variant: Mapped[str | None] = mapped_column(String(16))
    # What a chat run's speech guard and filler did, counts only, never a term (migration
    # 0016_guard_counts): {"guard": {action: n}, "lexicons": {name: n}, "filler": true}.
    speech: Mapped[dict[str, Any] | None] = mapped_column(JSON().with_variant(
        postgresql.JSONB(), "postgresql"))

    __table_args__ = (
        Index("ix_llm_call_logs_at", "at"),
        Index("ix_llm_call_logs_tier_code_id", "tier", "code", "id"),
        Index("ix_llm_call_logs_call_id", "call_id"),
        Index("ix_llm_call_logs_tier_variant_at", "tier", "variant", "at"),
    )


class IdBlock(Base):
    """One counter row per named sequence; portable to SQLite, unlike a PG sequence."""

    __tablename__ = "id_blocks"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    next_id: Mapped[int] = mapped_column(BigInteger, nullable=False)


Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class NluCallInput(Base):
    """What one NLU decision was asked and answered: customers' words, kept for
    `[calllog] nlu_inputs_days` so shadow evaluations can replay them (migration 0007)."""

    __tablename__ = "nlu_call_inputs"

    # The call-log record id of the decision's last attempt.
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    call_id: Mapped[str | None] = mapped_column(String(200))
    node_id: Mapped[str | None] = mapped_column(String(200))
    config_id: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str | None] = mapped_column(String(200))
    inputs: Mapped[dict[str, Any]] = mapped_column(Json, nullable=False)
    decision: Mapped[dict[str, Any]] = mapped_column(Json, nullable=False)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    redacted: Mapped[dict[str, int] | None] = mapped_column(Json)  # as LLMCallLog.redacted

    __table_args__ = (
        Index("ix_nlu_call_inputs_at", "at"),
        Index("ix_nlu_call_inputs_node_id_id", "node_id", "id"),
    )
