"""Auth tables in the `callout` schema. Only hashes of secrets are stored.

    console_users     username, argon2id password_hash, role, source (env|generated)
    api_tokens        name, scope, sha256 token_hash, display prefix, source
    console_sessions  sha256 of the cookie's session id, username, csrf_token, expiry

The CSRF token is stored as is: it is no credential on its own (it is useless without the
session cookie) and the server must hand it back from `/api/auth/me`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from callout_server.db.base import Base, UTCDateTime, utcnow


class ConsoleUser(Base):
    __tablename__ = "console_users"
    __table_args__ = (
        CheckConstraint("role IN ('admin')", name="role"),
        CheckConstraint("source IN ('env', 'generated')", name="source"),
    )

    username: Mapped[str] = mapped_column(String(128), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="admin")
    # `generated` users are retired once the environment names a console user.
    source: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


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


class ConsoleSession(Base):
    __tablename__ = "console_sessions"
    __table_args__ = (
        # Named explicitly: the convention's column label would include the schema.
        Index("ix_console_sessions_username", "username"),
        Index("ix_console_sessions_expires_at", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 hex of the cookie value
    username: Mapped[str] = mapped_column(
        String(128), ForeignKey("console_users.username", ondelete="CASCADE")
    )
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
