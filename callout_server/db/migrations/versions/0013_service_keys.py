"""Service keys (one credential per dialer cluster or campaign, with limits), prices on
configurations, and the call log's key, campaign and cost (usage summed per day).

Revision ID: 0013_service_keys
Revises: 0012_lexicons
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013_service_keys"
down_revision: str | Sequence[str] | None = "0012_lexicons"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LATENCY_BUCKETS = 24  # calllog/usage_rollup.py: BUCKETS


def _schema() -> str | None:
    # Alembic writes ALTER TABLE itself, past the schema translation env.py sets for SQLite.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    op.create_table(
        "service_keys",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(128), nullable=False),
        # The visible start of the key (csk_ + 6 characters): names it, cannot be used.
        sa.Column("prefix", sa.String(16), nullable=False),
        # HMAC-SHA256 of the key under a subkey of CALLOUT_SECRET_KEY, hex.
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("tiers", Json, nullable=False),
        sa.Column("campaign", sa.String(64)),
        sa.Column("rpm", sa.Integer()),
        sa.Column("max_in_flight", sa.Integer()),
        sa.Column("daily_tokens", sa.BigInteger()),
        sa.Column("expires_at", sa.DateTime(timezone=True)),
        sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(128)),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("digest", name="uq_service_keys_digest"),
        schema=SCHEMA,
    )
    schema = _schema()
    op.add_column("ai_llm_configs", sa.Column("price", Json, nullable=True), schema=schema)
    logs = "llm_call_logs"
    op.add_column(logs, sa.Column("key_id", sa.Integer(), nullable=True), schema=schema)
    op.add_column(logs, sa.Column("campaign", sa.String(64), nullable=True), schema=schema)
    op.add_column(logs, sa.Column("cost", sa.Float(), nullable=True), schema=schema)
    op.add_column(logs, sa.Column("currency", sa.String(8), nullable=True), schema=schema)
    # The usage summary: one row per (day, tier, config, key, campaign, currency, source),
    # added to by the call log's writer in the transaction that inserts the records.
    op.create_table(
        "usage_daily",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("config_id", sa.Integer(), nullable=False),  # 0: config.toml
        sa.Column("key_id", sa.Integer(), nullable=False),      # 0: no service key
        sa.Column("campaign", sa.String(64), nullable=False),   # "": none
        sa.Column("currency", sa.String(8), nullable=False),    # "": unpriced
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.Column("errors", sa.BigInteger(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("reasoning_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost", sa.Float(), nullable=False),
        # Latency histogram, fixed log-spaced buckets (calllog/usage_rollup.py): p50 and p95
        # without a scan; one integer column per bucket so concurrent upserts simply add.
        *(sa.Column(f"l{i:02d}", sa.Integer(), nullable=False, server_default="0")
          for i in range(LATENCY_BUCKETS)),
        sa.PrimaryKeyConstraint("day", "tier", "config_id", "key_id", "campaign", "currency",
                                name="pk_usage_daily"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    schema = _schema()
    op.drop_table("usage_daily", schema=SCHEMA)
    for column in ("currency", "cost", "campaign", "key_id"):
        op.drop_column("llm_call_logs", column, schema=schema)
    op.drop_column("ai_llm_configs", "price", schema=schema)
    op.drop_table("service_keys", schema=SCHEMA)
