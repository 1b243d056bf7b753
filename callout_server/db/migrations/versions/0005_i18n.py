"""Call-log diagnostics stored as code and numbers, worded when read.

What exactly happened (`reason` and its numbers, `reason_args`) and the outside world's
words (`detail`), so a record is worded in the language of whoever reads it. `message` /
`advice` stay for records written before.

Revision ID: 0005_i18n
Revises: 0004_scripts
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_i18n"
down_revision: str | Sequence[str] | None = "0004_scripts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"


def _schema() -> str | None:
    # env.py's schema_translate_map covers statements SQLAlchemy compiles (CREATE TABLE),
    # not the table name alembic writes into an ALTER: name no schema on SQLite.
    return None if op.get_bind().dialect.name == "sqlite" else SCHEMA


def upgrade() -> None:
    schema = _schema()
    op.add_column("llm_call_logs", sa.Column("reason", sa.String(40)), schema=schema)
    op.add_column("llm_call_logs", sa.Column("reason_args", sa.JSON()), schema=schema)
    op.add_column("llm_call_logs", sa.Column("detail", sa.Text()), schema=schema)


def downgrade() -> None:
    schema = _schema()
    with op.batch_alter_table("llm_call_logs", schema=schema) as batch:
        batch.drop_column("detail")
        batch.drop_column("reason_args")
        batch.drop_column("reason")
