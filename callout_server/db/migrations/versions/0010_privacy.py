"""What redaction replaced, kept with each row that holds customers' text (issue 22).

`redacted` is `{kind: count}` (`{"mobile": 2}`, `{}` when nothing was found, with
`"redaction_failed": n` when a text was not stored because redaction failed); NULL on a row
written before redaction or with `[privacy] redact = false`, which `callout-server
redact-stored` redacts.

Revision ID: 0010_privacy
Revises: 0009_endpoint_drains
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010_privacy"
down_revision: str | Sequence[str] | None = "0009_endpoint_drains"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"
TABLES = ("llm_call_logs", "nlu_call_inputs", "evaluation_results", "audit_events")


def _schema() -> str | None:
    # As 0005: alembic writes the table name of an ALTER itself; SQLite has no schema.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    schema = _schema()
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    for table in TABLES:
        op.add_column(table, sa.Column("redacted", json, nullable=True), schema=schema)


def downgrade() -> None:
    schema = _schema()
    for table in TABLES:
        with op.batch_alter_table(table, schema=schema) as batch:
            batch.drop_column("redacted")
