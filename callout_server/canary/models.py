"""The `canaries` table (migration 0014_canaries): one row per canary, running or ended."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, Index, Integer, String, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime

BigId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(postgresql.JSONB(), "postgresql")

RUNNING = "running"
STATUSES = ("running", "promoted", "stopped", "rolled_back")


class CanaryRow(Base):
    __tablename__ = "canaries"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tier: Mapped[str] = mapped_column(String(16), nullable=False)
    candidate_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The configuration that served the tier when the canary started (None: config.toml).
    active_id: Mapped[int | None] = mapped_column(BigInteger)
    percent: Mapped[float] = mapped_column(Float, nullable=False)
    # Hex; hashed with each call_id to split calls (the same on every worker).
    salt: Mapped[str] = mapped_column(String(32), nullable=False)
    max_fallback_rate: Mapped[float | None] = mapped_column(Float)
    max_error_rate: Mapped[float | None] = mapped_column(Float)
    max_p95_ms: Mapped[float | None] = mapped_column(Float)
    min_calls: Mapped[int] = mapped_column(Integer, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    # Why it was rolled back: {"limit": ..., "value": ..., "max": ..., "calls": ...}.
    reason: Mapped[dict[str, Any] | None] = mapped_column(Json)
    # Both sides' figures when it ended (the call log is purged after its retention).
    figures: Mapped[dict[str, Any] | None] = mapped_column(Json)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    started_by: Mapped[str | None] = mapped_column(String(128))
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_by: Mapped[str | None] = mapped_column(String(128))

    __table_args__ = (
        # One running canary per tier, held by the database as well as by the service.
        Index("uq_canaries_running_tier", "tier", unique=True,
              postgresql_where=text("status = 'running'"),
              sqlite_where=text("status = 'running'")),
        Index("ix_canaries_candidate_id", "candidate_id"),
    )
