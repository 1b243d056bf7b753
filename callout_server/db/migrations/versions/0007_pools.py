"""Upstream pools: replicas, fallbacks, hedging and the in-flight cap on a configuration.

The call log names the endpoint that served a call and how many requests it took.

Revision ID: 0007_pools
Revises: 0006_users
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007_pools"
down_revision: str | Sequence[str] | None = "0006_users"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _schema() -> str | None:
    # Alembic writes ALTER TABLE itself, past the schema translation env.py sets for SQLite.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    # Plain ADD COLUMN: SQLite takes it as it is (no table copy), PostgreSQL too.
    configs, logs, schema = "ai_llm_configs", "llm_call_logs", _schema()
    op.add_column(configs, sa.Column("endpoints", Json, nullable=False,
                                     server_default=sa.text("'[]'")), schema=schema)
    op.add_column(configs, sa.Column("fallback_ids", Json, nullable=False,
                                     server_default=sa.text("'[]'")), schema=schema)
    op.add_column(configs, sa.Column("hedge_after_ms", sa.Integer(), nullable=True),
                  schema=schema)
    op.add_column(configs, sa.Column("max_in_flight", sa.Integer(), nullable=True),
                  schema=schema)
    op.add_column(logs, sa.Column("endpoint", sa.String(2048), nullable=True), schema=schema)
    op.add_column(logs, sa.Column("attempts", sa.Integer(), nullable=True), schema=schema)


def downgrade() -> None:
    schema = _schema()
    for column in ("attempts", "endpoint"):
        op.drop_column("llm_call_logs", column, schema=schema)
    for column in ("max_in_flight", "hedge_after_ms", "fallback_ids", "endpoints"):
        op.drop_column("ai_llm_configs", column, schema=schema)
