"""People with roles, their sessions, and the audit trail.

`console_users` (admins only) becomes `users` (viewer | operator | admin, enabled,
last_login_at; source env | generated | console) and `console_sessions` becomes
`user_sessions` pointing at it; existing rows, sessions included, are carried over.
`audit_events` is new.

Revision ID: 0006_users
Revises: 0005_i18n
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006_users"
down_revision: str | None = "0005_i18n"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "callout"  # translated away on SQLite by env.py
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)

_USER_COLS = ("username", "password_hash", "role", "source", "created_at", "updated_at")
_SESSION_COLS = ("id", "username", "csrf_token", "created_at", "expires_at")


def _table(name: str, cols: Sequence[str]) -> sa.Table:
    # A Table (not a lightweight table()): only those get the schema translated on SQLite.
    return sa.Table(name, sa.MetaData(), *(sa.Column(c) for c in cols), schema=SCHEMA)


def _create_sessions(name: str, users: str) -> None:
    op.create_table(
        name,
        sa.Column("id", sa.String(64), nullable=False),  # sha256 hex of the cookie value
        sa.Column("username", sa.String(128), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name=f"pk_{name}"),
        sa.ForeignKeyConstraint(["username"], [f"{SCHEMA}.{users}.username"],
                                name=f"fk_{name}_username_{users}", ondelete="CASCADE"),
        schema=SCHEMA,
    )
    op.create_index(f"ix_{name}_username", name, ["username"], schema=SCHEMA)
    op.create_index(f"ix_{name}_expires_at", name, ["expires_at"], schema=SCHEMA)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("username", sa.String(128), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),  # argon2id
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("last_login_at", Ts),
        sa.CheckConstraint("role IN ('viewer', 'operator', 'admin')", name="ck_users_role"),
        sa.CheckConstraint("source IN ('env', 'generated', 'console')", name="ck_users_source"),
        sa.PrimaryKeyConstraint("username", name="pk_users"),
        schema=SCHEMA,
    )
    _create_sessions("user_sessions", "users")
    old_users, old_sessions = _table("console_users", _USER_COLS), _table("console_sessions", _SESSION_COLS)
    op.execute(_table("users", _USER_COLS).insert().from_select(
        list(_USER_COLS), sa.select(*(old_users.c[c] for c in _USER_COLS))))
    op.execute(_table("user_sessions", _SESSION_COLS).insert().from_select(
        list(_SESSION_COLS), sa.select(*(old_sessions.c[c] for c in _SESSION_COLS))))
    op.drop_index("ix_console_sessions_expires_at", "console_sessions", schema=SCHEMA)
    op.drop_index("ix_console_sessions_username", "console_sessions", schema=SCHEMA)
    op.drop_table("console_sessions", schema=SCHEMA)
    op.drop_table("console_users", schema=SCHEMA)

    op.create_table(
        "audit_events",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("at", Ts, nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("via", sa.String(16), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(256)),
        sa.Column("detail", Json, nullable=False),
        sa.Column("ip", sa.String(64)),
        sa.CheckConstraint("via IN ('session', 'token')", name="ck_audit_events_via"),
        sa.PrimaryKeyConstraint("id", name="pk_audit_events"),
        schema=SCHEMA,
    )
    op.create_index("ix_audit_events_at", "audit_events", ["at"], schema=SCHEMA)
    op.create_index("ix_audit_events_actor_id", "audit_events", ["actor", "id"], schema=SCHEMA)
    op.create_index("ix_audit_events_action_id", "audit_events", ["action", "id"], schema=SCHEMA)


def downgrade() -> None:
    op.drop_index("ix_audit_events_action_id", "audit_events", schema=SCHEMA)
    op.drop_index("ix_audit_events_actor_id", "audit_events", schema=SCHEMA)
    op.drop_index("ix_audit_events_at", "audit_events", schema=SCHEMA)
    op.drop_table("audit_events", schema=SCHEMA)

    # Back to admins only: viewers, operators and disabled users cannot be represented.
    op.create_table(
        "console_users",
        sa.Column("username", sa.String(128), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False, server_default="admin"),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.CheckConstraint("role IN ('admin')", name="ck_console_users_role"),
        sa.CheckConstraint("source IN ('env', 'generated')", name="ck_console_users_source"),
        sa.PrimaryKeyConstraint("username", name="pk_console_users"),
        schema=SCHEMA,
    )
    _create_sessions("console_sessions", "console_users")
    users = _table("users", (*_USER_COLS, "enabled"))
    kept = sa.select(*(users.c[c] for c in _USER_COLS)).where(
        users.c.role == "admin", users.c.enabled.is_(sa.true()),
        users.c.source.in_(("env", "generated")))
    op.execute(_table("console_users", _USER_COLS).insert().from_select(list(_USER_COLS), kept))
    sessions = _table("user_sessions", _SESSION_COLS)
    old_users = _table("console_users", _USER_COLS)
    op.execute(_table("console_sessions", _SESSION_COLS).insert().from_select(
        list(_SESSION_COLS), sa.select(*(sessions.c[c] for c in _SESSION_COLS)).where(
            sessions.c.username.in_(sa.select(old_users.c.username)))))
    op.drop_index("ix_user_sessions_expires_at", "user_sessions", schema=SCHEMA)
    op.drop_index("ix_user_sessions_username", "user_sessions", schema=SCHEMA)
    op.drop_table("user_sessions", schema=SCHEMA)
    op.drop_table("users", schema=SCHEMA)
