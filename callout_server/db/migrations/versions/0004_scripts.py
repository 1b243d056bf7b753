"""Script drafts: generated call scripts operators keep and edit.

Revision ID: 0004_scripts
Revises: 0003_llm_call_logs
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_scripts"
down_revision: str | Sequence[str] | None = "0003_llm_call_logs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "scripts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("brief", sa.Text(), nullable=False),
        sa.Column("script", sa.Text(), nullable=False),
        sa.Column("reasoning", sa.Text()),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("model", sa.String(200)),
        sa.Column("config_id", sa.Integer()),
        sa.Column("prompt_tokens", sa.Integer()),
        sa.Column("completion_tokens", sa.Integer()),
        sa.Column("reasoning_tokens", sa.Integer()),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("updated_by", sa.String(100)),
        sa.PrimaryKeyConstraint("id", name="pk_scripts"),
        schema=SCHEMA,
    )
    op.create_index("ix_scripts_updated_at", "scripts", ["updated_at"], schema=SCHEMA)


def downgrade() -> None:
    op.drop_index("ix_scripts_updated_at", "scripts", schema=SCHEMA)
    op.drop_table("scripts", schema=SCHEMA)
