"""Script drafts operators keep: `callout.scripts`."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime, utcnow

BigId = BigInteger().with_variant(Integer(), "sqlite")


class ScriptDraft(Base):
    __tablename__ = "scripts"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(String(200), nullable=False)
    brief: Mapped[str] = mapped_column(Text, nullable=False)
    script: Mapped[str] = mapped_column(Text, nullable=False)
    # Kept apart from the script, never mixed into it: operators may read why, TTS never does.
    reasoning: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), nullable=False)  # complete | truncated
    model: Mapped[str | None] = mapped_column(String(200))
    config_id: Mapped[int | None] = mapped_column(Integer)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    reasoning_tokens: Mapped[int | None] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    updated_by: Mapped[str | None] = mapped_column(String(100))

    __table_args__ = (Index("ix_scripts_updated_at", "updated_at"),)
