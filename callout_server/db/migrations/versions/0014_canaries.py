"""Canary rollout: the canaries table, and each call-log record's side (variant).

Revision ID: 0014_canaries
Revises: 0013_service_keys
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014_canaries"
down_revision: str | Sequence[str] | None = "0013_service_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _schema() -> str | None:
    # Alembic writes ALTER TABLE itself, past the schema translation env.py sets for SQLite.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    op.create_table(
        "canaries",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("candidate_id", sa.BigInteger(), nullable=False),
        sa.Column("active_id", sa.BigInteger()),
        sa.Column("percent", sa.Float(), nullable=False),
        sa.Column("salt", sa.String(32), nullable=False),
        sa.Column("max_fallback_rate", sa.Float()),
        sa.Column("max_error_rate", sa.Float()),
        sa.Column("max_p95_ms", sa.Float()),
        sa.Column("min_calls", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", Json),
        sa.Column("figures", Json),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_by", sa.String(128)),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("ended_by", sa.String(128)),
        sa.PrimaryKeyConstraint("id", name="pk_canaries"),
        schema=SCHEMA,
    )
    op.create_index("uq_canaries_running_tier", "canaries", ["tier"], unique=True,
                    postgresql_where=sa.text("status = 'running'"),
                    sqlite_where=sa.text("status = 'running'"), schema=SCHEMA)
    op.create_index("ix_canaries_candidate_id", "canaries", ["candidate_id"], schema=SCHEMA)
    op.add_column("llm_call_logs", sa.Column("variant", sa.String(16), nullable=True),
                  schema=_schema())
    op.create_index("ix_llm_call_logs_tier_variant_at", "llm_call_logs",
                    ["tier", "variant", "at"], schema=SCHEMA)


def downgrade() -> None:
    op.drop_index("ix_llm_call_logs_tier_variant_at", "llm_call_logs", schema=SCHEMA)
    op.drop_column("llm_call_logs", "variant", schema=_schema())
    op.drop_index("ix_canaries_candidate_id", "canaries", schema=SCHEMA)
    op.drop_index("uq_canaries_running_tier", "canaries", schema=SCHEMA)
    op.drop_table("canaries", schema=SCHEMA)
