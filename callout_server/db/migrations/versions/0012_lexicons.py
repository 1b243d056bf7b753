"""Lexicons of the speech guard: forbidden terms, allowed look-alikes and what to do on a hit.

Revision ID: 0012_lexicons
Revises: 0011_global_intents
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012_lexicons"
down_revision: str | Sequence[str] | None = "0011_global_intents"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "lexicons",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("terms", JSON, nullable=False),
        sa.Column("allow", JSON, nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("replacement", sa.Text()),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(128)),
        sa.PrimaryKeyConstraint("name", name="pk_lexicons"),
        sa.CheckConstraint("action IN ('replace', 'drop', 'end_turn')",
                           name="ck_lexicons_action"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    op.drop_table("lexicons", schema=SCHEMA)
