"""Endpoints of a pool taken out of service by hand (drained), cluster-wide.

Revision ID: 0009_endpoint_drains
Revises: 0008_evaluations
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_endpoint_drains"
down_revision: str | Sequence[str] | None = "0008_evaluations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"


def upgrade() -> None:
    op.create_table(
        "endpoint_drains",
        # The pool's key (a configuration id, or file:<tier> for a config.toml section) and
        # the endpoint's base URL as ops see it (credentials masked: none are stored here).
        sa.Column("config_key", sa.String(64), nullable=False),
        sa.Column("base_url", sa.String(2048), nullable=False),
        sa.Column("drained_by", sa.String(128)),
        sa.Column("drained_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("config_key", "base_url", name="pk_endpoint_drains"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    op.drop_table("endpoint_drains", schema=SCHEMA)
