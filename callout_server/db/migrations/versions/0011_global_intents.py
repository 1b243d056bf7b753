"""Global intents: what a customer can say at any node that overrides it (issue 23).

Revision ID: 0011_global_intents
Revises: 0010_privacy
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011_global_intents"
down_revision: str | Sequence[str] | None = "0010_privacy"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    # One row once an operator saved the list: from then on the rows are the list (an empty
    # list included); before, config.toml's defaults are served (version 0).
    op.create_table(
        "global_intents_state",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_by", sa.String(128)),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_global_intents_state"),
        schema=SCHEMA,
    )
    op.create_table(
        "global_intents",
        sa.Column("position", sa.Integer, nullable=False),  # the list's order: first hit wins
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("description", sa.Text, nullable=False, server_default=""),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("phrases", JSON, nullable=False),
        sa.PrimaryKeyConstraint("position", name="pk_global_intents"),
        sa.UniqueConstraint("name", name="uq_global_intents_name"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    op.drop_table("global_intents", schema=SCHEMA)
    op.drop_table("global_intents_state", schema=SCHEMA)
