"""ORM rows of the global intents (migration 0011_global_intents)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Integer, String, Text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime

Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class GlobalIntentsState(Base):
    """One row (id 1) once an operator saved the list: its version and who saved it. With no
    row, the list is config.toml's defaults (version 0)."""

    __tablename__ = "global_intents_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    updated_by: Mapped[str | None] = mapped_column(String(128))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class GlobalIntentRow(Base):
    __tablename__ = "global_intents"

    position: Mapped[int] = mapped_column(Integer, primary_key=True)  # first hit wins
    name: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    action: Mapped[str] = mapped_column(String(16))
    enabled: Mapped[bool] = mapped_column(Boolean)
    phrases: Mapped[list[Any]] = mapped_column(Json)
