"""The credentials a server starts with: the environment's, or generated once and printed once.

    CredentialsBootstrap
      admin_username     the console user the environment names (kept an enabled admin), or None
      env_token(scope)   the admin / service token the environment sets, or ""
      run()              stored users and tokens brought in line with the environment, and
                         what is missing generated, in one transaction; returns what it
                         generated (label, secret) for announce()
      announce()         writes the generated credentials once to stdout, never to the log

The environment's admin (`CALLOUT_ADMIN_USER` / `CALLOUT_ADMIN_PASSWORD`) is made an enabled
admin again at every start: the way back in when nobody else is one. Several workers starting
at once race on `INSERT ... ON CONFLICT DO NOTHING`: only the winner prints. `AuthService`
calls this at start (and again in the background when the database was down).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.auth.models import ApiToken, User, UserSession
from callout_server.auth.passwords import hash_password, verify_password
from callout_server.auth.roles import Role
from callout_server.auth.settings import AuthSettings
from callout_server.auth.tokens import (
    SCOPES,
    Scope,
    display_prefix,
    generate_token,
    hash_token,
    token_name,
)
from callout_server.db.engine import Database

log = logging.getLogger(__name__)

DEFAULT_ADMIN_USER = "admin"
_WEAK_TOKEN_CHARS = 16

Generated = list[tuple[str, str]]  # (label, secret) pairs, printed once


class CredentialsBootstrap:
    def __init__(self, settings: AuthSettings, db: Database, *,
                 clock: Callable[[], datetime], out: TextIO | None = None) -> None:
        self._settings = settings
        self._db = db
        self._clock = clock
        self._out = out  # None: sys.stdout at the time of printing

    @property
    def admin_username(self) -> str | None:
        """The console user the environment names (kept an admin), or None."""
        env_user = self._settings.admin_user.strip()
        if env_user:
            return env_user
        return DEFAULT_ADMIN_USER if self._settings.admin_password.get_secret_value() else None

    def env_token(self, scope: Scope) -> str:
        secret = self._settings.admin_token if scope == "admin" else self._settings.service_token
        return secret.get_secret_value().strip()

    async def run(self) -> Generated:
        """Bring stored credentials in line with the environment; generate what is missing."""
        admin_tok, service_tok = self.env_token("admin"), self.env_token("service")
        if admin_tok and admin_tok == service_tok:
            raise ValueError("CALLOUT_ADMIN_TOKEN and CALLOUT_SERVICE_TOKEN must differ")
        for scope, tok in (("admin", admin_tok), ("service", service_tok)):
            if tok and len(tok) < _WEAK_TOKEN_CHARS:
                log.warning("the %s token from the environment is shorter than %d characters",
                            scope, _WEAK_TOKEN_CHARS)
        generated: Generated = []
        # No 503 translation at start-up: a missing table or database must fail loudly.
        async with self._db.session() as s:
            generated += await self._user(s)
            for scope in SCOPES:
                generated += await self._token(s, scope)
        return generated

    async def _user(self, s: AsyncSession) -> Generated:
        env_password = self._settings.admin_password.get_secret_value()
        username = self.admin_username
        if username is None:
            if await s.scalar(select(func.count()).select_from(User)):
                return []
            return await self._generate_user(s, DEFAULT_ADMIN_USER)

        # The environment now names the console login: a generated bootstrap login retires,
        # and one the environment named before becomes an ordinary user.
        await s.execute(delete(User).where(User.source == "generated",
                                           User.username != username))
        await s.execute(update(User).where(User.source == "env", User.username != username)
                        .values(source="console", updated_at=self._clock()))
        row = await s.get(User, username)
        if row is not None and (row.role != Role.admin or not row.enabled):
            # The bootstrap admin stays an admin: the way back in when nobody else is one.
            row.role, row.enabled, row.updated_at = Role.admin.value, True, self._clock()
            log.warning("the console user named by CALLOUT_ADMIN_USER was made an enabled "
                        "admin again")
        if not env_password:
            return [] if row is not None else await self._generate_user(s, username)
        if row is not None:
            check = await asyncio.to_thread(verify_password, row.password_hash, env_password)
            if check.ok:
                if check.new_hash or row.source != "env":
                    row.password_hash = check.new_hash or row.password_hash
                    row.source, row.updated_at = "env", self._clock()
                return []
        new_hash = await asyncio.to_thread(hash_password, env_password)
        now = self._clock()
        stmt = self._insert(User).values(
            username=username, password_hash=new_hash, role=Role.admin.value, source="env",
            enabled=True, created_at=now, updated_at=now)
        await s.execute(stmt.on_conflict_do_update(
            index_elements=["username"],
            set_={"password_hash": new_hash, "source": "env", "role": Role.admin.value,
                  "enabled": True, "updated_at": now}))
        if row is not None:  # the password changed: sign that user out everywhere
            await s.execute(delete(UserSession).where(UserSession.username == username))
            log.info("console password for the configured admin user was changed from the environment")
        return []

    async def _generate_user(self, s: AsyncSession, username: str) -> Generated:
        password = secrets.token_urlsafe(18)
        new_hash = await asyncio.to_thread(hash_password, password)
        now = self._clock()
        stmt = (self._insert(User)
                .values(username=username, password_hash=new_hash, role=Role.admin.value,
                        source="generated", enabled=True, created_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["username"])
                .returning(User.username))
        # Another worker starting at the same time may have won: then it prints, not us.
        if await s.scalar(stmt) is None:
            return []
        return [("console login", f"{username} / {password}")]

    async def _token(self, s: AsyncSession, scope: Scope) -> Generated:
        name, env_token, now = token_name(scope), self.env_token(scope), self._clock()
        if env_token:
            values = {"scope": scope, "token_hash": hash_token(env_token),
                      "prefix": display_prefix(env_token), "source": "env"}
            stmt = self._insert(ApiToken).values(name=name, created_at=now, **values)
            await s.execute(stmt.on_conflict_do_update(index_elements=["name"], set_=values))
            return []
        token = generate_token(scope)
        stmt = (self._insert(ApiToken)
                .values(name=name, scope=scope, token_hash=hash_token(token),
                        prefix=display_prefix(token), source="generated", created_at=now)
                .on_conflict_do_nothing(index_elements=["name"])
                .returning(ApiToken.name))
        if await s.scalar(stmt) is None:
            return []
        return [(f"{scope} token", token)]

    def announce(self, generated: Generated) -> None:
        """Print the generated credentials once (call after their hashes have committed)."""
        rule = "=" * 72
        lines = [rule, " callout-server generated credentials at first start.",
                 " They are shown ONCE: only their hashes are stored. Keep them now.", ""]
        lines += [f"   {label:<14} {secret}" for label, secret in generated]
        lines += ["", " Choose your own with CALLOUT_ADMIN_USER / CALLOUT_ADMIN_PASSWORD /",
                  " CALLOUT_ADMIN_TOKEN / CALLOUT_SERVICE_TOKEN.", rule]
        out = self._out or sys.stdout
        out.write("\n".join(lines) + "\n")
        out.flush()
        log.warning("generated credentials (%s) were printed once to stdout",
                    ", ".join(label for label, _ in generated))

    def _insert(self, model: type[Any]) -> Any:
        dialect = postgresql if self._db.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(model)
