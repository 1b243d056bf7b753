"""ORM rows of the configuration tables (migrations 0001_llm_configs, 0007_pools,
0009_endpoint_drains)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, Integer, String, Text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime

BigId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(postgresql.JSONB(), "postgresql")


class LLMConfigRow(Base):
    __tablename__ = "ai_llm_configs"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tier: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(128))
    base_url: Mapped[str] = mapped_column(String(2048))
    api_key_enc: Mapped[str | None] = mapped_column(Text)  # "v1:<fernet token>"
    model: Mapped[str] = mapped_column(String(256))
    api_style: Mapped[str] = mapped_column(String(32), default="chat-completions")
    timeout_s: Mapped[float] = mapped_column(Float, default=30.0)
    max_tokens: Mapped[int] = mapped_column(Integer, default=300)
    temperature: Mapped[float | None] = mapped_column(Float)
    enable_thinking: Mapped[bool | None] = mapped_column(Boolean)
    reasoning_effort: Mapped[str | None] = mapped_column(String(32))
    extra_params: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    vendor: Mapped[str | None] = mapped_column(String(64))
    # Upstream pools (migration 0007_pools): [{"base_url", "weight"}], [config ids]
    endpoints: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)
    fallback_ids: Mapped[list[int]] = mapped_column(Json, default=list)
    hedge_after_ms: Mapped[int | None] = mapped_column(Integer)
    max_in_flight: Mapped[int | None] = mapped_column(Integer)
    # {"input_per_mtok", "output_per_mtok", "currency"} or NULL (migration 0013_service_keys)
    price: Mapped[dict[str, Any] | None] = mapped_column(Json)
    send_priority: Mapped[bool] = mapped_column(Boolean, default=False)  # 0015
    is_active: Mapped[bool] = mapped_column(Boolean, default=False)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_by: Mapped[str | None] = mapped_column(String(128))


class LLMConfigRevision(Base):
    __tablename__ = "ai_llm_config_revisions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    config_id: Mapped[int] = mapped_column(BigInteger)
    config_version: Mapped[int | None] = mapped_column(Integer)
    tier: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str | None] = mapped_column(String(128))
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    generation: Mapped[int | None] = mapped_column(BigInteger)
    fields: Mapped[list[str]] = mapped_column(Json, default=list)
    changes: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)


class ConfigState(Base):
    __tablename__ = "config_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    generation: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EndpointDrain(Base):
    """An endpoint of a pool taken out of service by hand; loaded with every snapshot."""

    __tablename__ = "endpoint_drains"

    config_key: Mapped[str] = mapped_column(String(64), primary_key=True)  # id or file:<tier>
    base_url: Mapped[str] = mapped_column(String(2048), primary_key=True)  # as shown (masked)
    drained_by: Mapped[str | None] = mapped_column(String(128))
    drained_at: Mapped[datetime] = mapped_column(UTCDateTime)
