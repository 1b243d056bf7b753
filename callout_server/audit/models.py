"""`callout.audit_events` (created by migration 0006_users)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, CheckConstraint, Index, Integer, String
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime

BigId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (
        CheckConstraint("via IN ('session', 'token')", name="via"),
        # Named explicitly: the convention's column label would include the schema.
        Index("ix_audit_events_at", "at"),
        Index("ix_audit_events_actor_id", "actor", "id"),
        Index("ix_audit_events_action_id", "action", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    actor: Mapped[str] = mapped_column(String(128))
    via: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str | None] = mapped_column(String(256))
    detail: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    ip: Mapped[str | None] = mapped_column(String(64))
    # What redaction replaced in target and detail: {kind: count}; NULL before (0010_privacy).
    redacted: Mapped[dict[str, int] | None] = mapped_column(Json, nullable=True)
