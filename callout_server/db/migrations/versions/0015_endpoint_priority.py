"""A configuration may send vLLM's `priority` request field, by tier (send_priority).

Revision ID: 0015_endpoint_priority
Revises: 0014_canaries
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_endpoint_priority"
down_revision: str | Sequence[str] | None = "0014_canaries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _schema() -> str | None:
    return None if op.get_bind().dialect.name == "sqlite" else "callout"


def upgrade() -> None:
    # Plain ADD COLUMN with a default: SQLite takes it as it is, PostgreSQL too.
    op.add_column("ai_llm_configs", sa.Column("send_priority", sa.Boolean(), nullable=False,
                                              server_default=sa.false()), schema=_schema())


def downgrade() -> None:
    op.drop_column("ai_llm_configs", "send_priority", schema=_schema())
