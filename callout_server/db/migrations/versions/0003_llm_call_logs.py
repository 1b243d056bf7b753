"""The LLM call log ops read in the console, and the id-block counters behind its ids.

Revision ID: 0003_llm_call_logs
Revises: 0002_auth
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_llm_call_logs"
down_revision: str | Sequence[str] | None = "0002_auth"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "llm_call_logs",
        # Not auto-incremented: ids come from blocks reserved in id_blocks (see calllog/ids.py).
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("at", Ts, nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("code", sa.String(40), nullable=False),
        sa.Column("config_id", sa.Integer()),
        sa.Column("model", sa.String(200)),
        sa.Column("vendor", sa.String(40)),
        sa.Column("message", sa.Text()),
        sa.Column("advice", sa.Text()),
        sa.Column("finish_reason", sa.String(60)),
        sa.Column("latency_ms", sa.Float()),
        sa.Column("ttft_ms", sa.Float()),
        sa.Column("prompt_tokens", sa.Integer()),
        sa.Column("completion_tokens", sa.Integer()),
        sa.Column("reasoning_tokens", sa.Integer()),
        sa.Column("max_tokens", sa.Integer()),
        sa.Column("status", sa.Integer()),
        sa.Column("call_id", sa.String(200)),
        sa.Column("node_id", sa.String(200)),
        sa.PrimaryKeyConstraint("id", name="pk_llm_call_logs"),
        schema=SCHEMA,
    )
    op.create_index("ix_llm_call_logs_at", "llm_call_logs", ["at"], schema=SCHEMA)
    op.create_index("ix_llm_call_logs_tier_code_id", "llm_call_logs", ["tier", "code", "id"],
                    schema=SCHEMA)
    op.create_index("ix_llm_call_logs_call_id", "llm_call_logs", ["call_id"], schema=SCHEMA)
    op.create_table(
        "id_blocks",
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("next_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_id_blocks"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    op.drop_table("id_blocks", schema=SCHEMA)
    op.drop_index("ix_llm_call_logs_call_id", "llm_call_logs", schema=SCHEMA)
    op.drop_index("ix_llm_call_logs_tier_code_id", "llm_call_logs", schema=SCHEMA)
    op.drop_index("ix_llm_call_logs_at", "llm_call_logs", schema=SCHEMA)
    op.drop_table("llm_call_logs", schema=SCHEMA)
