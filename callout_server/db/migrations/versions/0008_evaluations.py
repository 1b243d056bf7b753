"""Shadow evaluation: NLU inputs kept with the call log, and the evaluations.

The call log gets its `source` (live or evaluation); each evaluation keeps its per-call
results.

Revision ID: 0008_evaluations
Revises: 0007_pools
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008_evaluations"
down_revision: str | Sequence[str] | None = "0007_pools"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Ts = sa.DateTime(timezone=True)
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _alter_schema() -> str | None:
    # ALTER TABLE names the schema as given (the translate map does not reach it): SQLite has none.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    # "live" for every record written so far; evaluation replays say "evaluation". A column
    # with a constant default is added without rewriting the table (PostgreSQL 11+).
    op.add_column("llm_call_logs", sa.Column("source", sa.String(16), nullable=False,
                                             server_default="live"), schema=_alter_schema())
    op.create_table(
        "nlu_call_inputs",
        # The id of the call-log record of the decision's last attempt (no foreign key: the
        # two are purged on their own clocks).
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("at", Ts, nullable=False),
        sa.Column("call_id", sa.String(200)),
        sa.Column("node_id", sa.String(200)),
        sa.Column("config_id", sa.Integer()),
        sa.Column("model", sa.String(200)),
        sa.Column("inputs", Json, nullable=False),
        sa.Column("decision", Json, nullable=False),
        sa.Column("latency_ms", sa.Float()),
        sa.PrimaryKeyConstraint("id", name="pk_nlu_call_inputs"),
        schema=SCHEMA,
    )
    op.create_index("ix_nlu_call_inputs_at", "nlu_call_inputs", ["at"], schema=SCHEMA)
    op.create_index("ix_nlu_call_inputs_node_id_id", "nlu_call_inputs", ["node_id", "id"],
                    schema=SCHEMA)
    op.create_table(
        "evaluations",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("candidate_name", sa.String(128)),
        sa.Column("candidate_model", sa.String(256)),
        sa.Column("since", Ts),
        sa.Column("node_id", sa.String(200)),
        sa.Column("limit", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("summary", Json),
        sa.Column("reason", sa.Text()),
        sa.Column("owner", sa.String(200)),
        sa.Column("heartbeat_at", Ts),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False,
                  server_default=sa.false()),
        sa.Column("created_by", sa.String(128)),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("finished_at", Ts),
        sa.PrimaryKeyConstraint("id", name="pk_evaluations"),
        schema=SCHEMA,
    )
    op.create_index("ix_evaluations_status", "evaluations", ["status"], schema=SCHEMA)
    op.create_table(
        "evaluation_results",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("evaluation_id", BigId, nullable=False),
        sa.Column("input_id", sa.BigInteger(), nullable=False),
        sa.Column("at", Ts, nullable=False),
        sa.Column("call_id", sa.String(200)),
        sa.Column("node_id", sa.String(200)),
        sa.Column("utterance", sa.Text()),
        sa.Column("recorded_intent", sa.Text()),
        sa.Column("recorded_slots", Json),
        sa.Column("recorded_fallback", sa.Boolean(), nullable=False),
        sa.Column("recorded_code", sa.String(40), nullable=False),
        sa.Column("recorded_latency_ms", sa.Float()),
        sa.Column("candidate_intent", sa.Text()),
        sa.Column("candidate_slots", Json),
        sa.Column("candidate_fallback", sa.Boolean(), nullable=False),
        sa.Column("candidate_code", sa.String(40), nullable=False),
        sa.Column("candidate_latency_ms", sa.Float()),
        sa.Column("prompt_tokens", sa.Integer()),
        sa.Column("completion_tokens", sa.Integer()),
        sa.Column("reasoning_tokens", sa.Integer()),
        sa.Column("intent_agrees", sa.Boolean()),
        sa.Column("slots_agree", sa.Boolean()),
        sa.Column("agrees", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evaluation_results"),
        sa.ForeignKeyConstraint(["evaluation_id"], [f"{SCHEMA}.evaluations.id"],
                                name="fk_evaluation_results_evaluation_id_evaluations",
                                ondelete="CASCADE"),
        schema=SCHEMA,
    )
    op.create_index("ix_evaluation_results_evaluation_id_agrees_id", "evaluation_results",
                    ["evaluation_id", "agrees", "id"], schema=SCHEMA)
    op.create_index("ix_evaluation_results_at", "evaluation_results", ["at"], schema=SCHEMA)


def downgrade() -> None:
    op.drop_index("ix_evaluation_results_at", "evaluation_results", schema=SCHEMA)
    op.drop_index("ix_evaluation_results_evaluation_id_agrees_id", "evaluation_results",
                  schema=SCHEMA)
    op.drop_table("evaluation_results", schema=SCHEMA)
    op.drop_index("ix_evaluations_status", "evaluations", schema=SCHEMA)
    op.drop_table("evaluations", schema=SCHEMA)
    op.drop_index("ix_nlu_call_inputs_node_id_id", "nlu_call_inputs", schema=SCHEMA)
    op.drop_index("ix_nlu_call_inputs_at", "nlu_call_inputs", schema=SCHEMA)
    op.drop_table("nlu_call_inputs", schema=SCHEMA)
    op.drop_column("llm_call_logs", "source", schema=_alter_schema())
