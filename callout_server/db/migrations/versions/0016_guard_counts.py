"""A chat call's record says what its speech guard and filler did (`speech`, counts only);
a shadow evaluation's result keeps the global intent each side named.

Revision ID: 0016_guard_counts
Revises: 0015_endpoint_priority
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016_guard_counts"
down_revision: str | Sequence[str] | None = "0015_endpoint_priority"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _schema() -> str | None:
    return None if op.get_bind().dialect.name == "sqlite" else "callout"


def upgrade() -> None:
    # A nullable column without a default: no table rewrite on PostgreSQL.
    op.add_column("llm_call_logs", sa.Column(
        "speech", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=True),
        schema=_schema())
    for side in ("recorded", "candidate"):
        op.add_column("evaluation_results", sa.Column(f"{side}_global_intent", sa.Text(),
                                                      nullable=True), schema=_schema())


def downgrade() -> None:
    for side in ("recorded", "candidate"):
        op.drop_column("evaluation_results", f"{side}_global_intent", schema=_schema())
    op.drop_column("llm_call_logs", "speech", schema=_schema())
