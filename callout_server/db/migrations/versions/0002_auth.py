"""Console users, API tokens and console sessions (only hashes of secrets are stored).

Revision ID: 0002_auth
Revises: 0001_llm_configs
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_auth"
down_revision: str | Sequence[str] | None = "0001_llm_configs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"  # translated away on SQLite by env.py
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "console_users",
        sa.Column("username", sa.String(128), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),  # argon2id
        sa.Column("role", sa.String(16), nullable=False, server_default="admin"),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.CheckConstraint("role IN ('admin')", name="ck_console_users_role"),
        sa.CheckConstraint("source IN ('env', 'generated')", name="ck_console_users_source"),
        sa.PrimaryKeyConstraint("username", name="pk_console_users"),
        schema=SCHEMA,
    )
    op.create_table(
        "api_tokens",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),  # sha256 hex
        sa.Column("prefix", sa.String(16), nullable=False),  # non-secret, for display
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.CheckConstraint("scope IN ('admin', 'service')", name="ck_api_tokens_scope"),
        sa.CheckConstraint("source IN ('env', 'generated')", name="ck_api_tokens_source"),
        sa.PrimaryKeyConstraint("name", name="pk_api_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_api_tokens_token_hash"),
        schema=SCHEMA,
    )
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.String(64), nullable=False),  # sha256 hex of the cookie value
        sa.Column("username", sa.String(128), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_console_sessions"),
        sa.ForeignKeyConstraint(["username"], [f"{SCHEMA}.console_users.username"],
                                name="fk_console_sessions_username_console_users",
                                ondelete="CASCADE"),
        schema=SCHEMA,
    )
    op.create_index("ix_console_sessions_username", "console_sessions", ["username"],
                    schema=SCHEMA)
    op.create_index("ix_console_sessions_expires_at", "console_sessions", ["expires_at"],
                    schema=SCHEMA)


def downgrade() -> None:
    op.drop_index("ix_console_sessions_expires_at", "console_sessions", schema=SCHEMA)
    op.drop_index("ix_console_sessions_username", "console_sessions", schema=SCHEMA)
    op.drop_table("console_sessions", schema=SCHEMA)
    op.drop_table("api_tokens", schema=SCHEMA)
    op.drop_table("console_users", schema=SCHEMA)
