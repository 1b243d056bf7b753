"""Auth tables in the `callout` schema. Only hashes of secrets are stored.

    users          username, argon2id password_hash, role (viewer|operator|admin), enabled,
                   source (env|generated|console), last_login_at
    api_tokens     name, scope, sha256 token_hash, display prefix, source
    user_sessions  sha256 of the cookie's session id, username, csrf_token, expiry

The CSRF token is stored as is: it is no credential on its own (it is useless without the
session cookie) and the server must hand it back from `/api/auth/me`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime, utcnow


class User(Base):
    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint("role IN ('viewer', 'operator', 'admin')", name="role"),
        CheckConstraint("source IN ('env', 'generated', 'console')", name="source"),
    )

    username: Mapped[str] = mapped_column(String(128), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    # `env`: the bootstrap admin the environment names (kept an admin at every start);
    # `generated`: the bootstrap admin made at first start, retired once the environment
    # names one; `console`: created by an admin.
    source: Mapped[str] = mapped_column(String(16))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ApiToken(Base):
    __tablename__ = "api_tokens"
    __table_args__ = (
        CheckConstraint("scope IN ('admin', 'service')", name="scope"),
        CheckConstraint("source IN ('env', 'generated')", name="source"),
    )

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex
    prefix: Mapped[str] = mapped_column(String(16))  # non-secret, for display only
    source: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class UserSession(Base):
    __tablename__ = "user_sessions"
    __table_args__ = (
        # Named explicitly: the convention's column label would include the schema.
        Index("ix_user_sessions_username", "username"),
        Index("ix_user_sessions_expires_at", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 hex of the cookie value
    username: Mapped[str] = mapped_column(
        String(128), ForeignKey("users.username", ondelete="CASCADE")
    )
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
