"""Model configurations, their revision history and the cluster-wide config generation.

Revision ID: 0001_llm_configs
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001_llm_configs"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"  # translated away on SQLite by env.py

# BIGINT ids on PostgreSQL; SQLite only auto-increments an INTEGER PRIMARY KEY.
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "ai_llm_configs",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("base_url", sa.String(2048), nullable=False),
        sa.Column("api_key_enc", sa.Text(), nullable=True),  # "v1:<fernet token>" or NULL
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("api_style", sa.String(32), nullable=False,
                  server_default="chat-completions"),
        sa.Column("timeout_s", sa.Float(), nullable=False, server_default="30"),
        sa.Column("max_tokens", sa.Integer(), nullable=False, server_default="300"),
        sa.Column("temperature", sa.Float(), nullable=True),
        sa.Column("enable_thinking", sa.Boolean(), nullable=True),
        sa.Column("reasoning_effort", sa.String(32), nullable=True),
        sa.Column("extra_params", Json, nullable=False, server_default=sa.text("'{}'")),
        sa.Column("vendor", sa.String(64), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("updated_by", sa.String(128), nullable=True),
        sa.CheckConstraint("tier IN ('nlu', 'chat', 'script')", name="tier"),
        sa.CheckConstraint("api_style IN ('chat-completions', 'responses')", name="api_style"),
        sa.CheckConstraint("timeout_s > 0", name="timeout_positive"),
        sa.CheckConstraint("max_tokens >= 1", name="max_tokens_positive"),
        sa.PrimaryKeyConstraint("id", name="pk_ai_llm_configs"),
        sa.UniqueConstraint("tier", "name", name="uq_ai_llm_configs_tier_name"),
        schema=SCHEMA,
    )
    # At most one active configuration per tier, enforced by the database itself.
    op.create_index(
        "uq_ai_llm_configs_active_tier", "ai_llm_configs", ["tier"], unique=True,
        schema=SCHEMA,
        postgresql_where=sa.text("is_active"), sqlite_where=sa.text("is_active"),
    )

    op.create_table(
        "ai_llm_config_revisions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        # No foreign key: the history outlives a deleted configuration.
        sa.Column("config_id", sa.BigInteger(), nullable=False),
        sa.Column("config_version", sa.Integer(), nullable=True),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(128), nullable=True),
        sa.Column("at", Ts, nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=True),
        # ["field", ...] and {"field": {"old": ..., "new": ...}}; the API key appears only
        # as {"api_key": {"change": "set" | "cleared" | "replaced"}}, never its value.
        sa.Column("fields", Json, nullable=False, server_default=sa.text("'[]'")),
        sa.Column("changes", Json, nullable=False, server_default=sa.text("'{}'")),
        sa.PrimaryKeyConstraint("id", name="pk_ai_llm_config_revisions"),
        schema=SCHEMA,
    )
    op.create_index("ix_ai_llm_config_revisions_config_id", "ai_llm_config_revisions",
                    ["config_id", "id"], schema=SCHEMA)

    # One row: the cluster-wide generation. Every configuration change bumps it in its own
    # transaction (which also serialises concurrent writers on the row lock).
    op.create_table(
        "config_state",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("generation", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("updated_at", Ts, nullable=True),
        sa.CheckConstraint("id = 1", name="single_row"),
        sa.PrimaryKeyConstraint("id", name="pk_config_state"),
        schema=SCHEMA,
    )
    op.execute(sa.text(
        f"INSERT INTO {SCHEMA}.config_state (id, generation) VALUES (1, 0)"
        if op.get_bind().dialect.name == "postgresql"
        else "INSERT INTO config_state (id, generation) VALUES (1, 0)"
    ))


def downgrade() -> None:
    op.drop_table("config_state", schema=SCHEMA)
    op.drop_index("ix_ai_llm_config_revisions_config_id", "ai_llm_config_revisions",
                  schema=SCHEMA)
    op.drop_table("ai_llm_config_revisions", schema=SCHEMA)
    op.drop_index("uq_ai_llm_configs_active_tier", "ai_llm_configs", schema=SCHEMA)
    op.drop_table("ai_llm_configs", schema=SCHEMA)
