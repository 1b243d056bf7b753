"""ORM row of the speech guard's lexicons (migration 0012_lexicons)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Integer, String, Text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime

Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class LexiconRow(Base):
    """One lexicon: its terms, the allowed look-alikes, the action on a hit."""

    __tablename__ = "lexicons"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    terms: Mapped[list[str]] = mapped_column(Json)
    allow: Mapped[list[str]] = mapped_column(Json)
    action: Mapped[str] = mapped_column(String(16))  # replace | drop | end_turn
    replacement: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_by: Mapped[str | None] = mapped_column(String(128))
