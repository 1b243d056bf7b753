"""AuthService: credentials bootstrap at start, console sessions, the in-memory token table.

    bootstrap()        env credentials upserted, unset ones generated once and printed once
                       (`bootstrap_credentials.py`); retried in the background while the
                       database is down at start
    tokens             TokenTable held in memory: bearer checks do no I/O (dialer hot path)
    login / logout     argon2id verification off the event loop; sessions stored as sha256;
                       each login, failed login and logout goes on the audit trail
    session(raw_id)    one primary-key query joined with the user (enabled, current role);
                       used by admin/console requests only
    change_password    the user's own; their other sessions end

Errors raised here are the API's (`Unauthorized` and `auth/errors.py`'s 429 and 409; a
database that cannot serve is the session's `DatabaseDown`, a 503), so the thin router only
forwards them. Secrets (passwords, tokens, session ids) never reach a
log line; generated ones are written once to stdout, after the transaction that stores their
hashes has committed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TextIO

from sqlalchemy import delete, select, update

from callout_server.audit.trail import Actor, record
from callout_server.auth.bootstrap_credentials import CredentialsBootstrap
from callout_server.auth.errors import ManagedByEnvironment, TooManyAttempts
from callout_server.auth.models import ApiToken, User, UserSession
from callout_server.auth.passwords import hash_password, verify_password, warm_up
from callout_server.auth.passwords import use as use_hashing
from callout_server.auth.settings import AuthSettings
from callout_server.auth.throttle import LoginThrottle
from callout_server.auth.tokens import SCOPES, TokenTable, hash_token, token_name
from callout_server.db.base import utcnow
from callout_server.db.engine import Database, is_db_unavailable
from callout_server.errors import Unauthorized, UnprocessableEntity
from callout_server.i18n import Msg, msg

log = logging.getLogger(__name__)

# One message whichever part was wrong, so the answer does not tell which usernames exist.
INVALID_CREDENTIALS = msg("invalid_credentials")
_MAX_FIELD = 256  # longer usernames/session ids are rejected before any hashing or query


class KeyGrant(Protocol):
    """A service key as authentication sees it (`service_keys.table.ServiceKey`)."""

    @property
    def id(self) -> int: ...

    def refusal(self, now: float) -> Msg | None: ...


# The service-key lookup the composition root installs (memory only; None: no keys).
KeyLookup = Callable[[str], KeyGrant | None]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    username: str
    role: str
    csrf_token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class NewSession:
    session_id: str  # the cookie value; only its sha256 is stored
    info: SessionInfo


def _session_key(raw_id: str) -> str:
    return hashlib.sha256(raw_id.encode("utf-8")).hexdigest()


class AuthService:
    def __init__(self, settings: AuthSettings, db: Database, *,
                 out: TextIO | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._settings = settings
        self.cookie_secure = settings.cookie_secure
        self.session_ttl_s = settings.session_ttl_s
        self._db = db
        self.clock = clock
        # Through a lambda: a test may set `clock` after construction.
        self.credentials = CredentialsBootstrap(settings, db, clock=lambda: self.clock(), out=out)
        self.throttle = LoginThrottle()
        self._retry: asyncio.Task[None] | None = None
        self._stopping = False
        self.session_ttl = timedelta(seconds=settings.session_ttl_s)
        self.keys: KeyLookup | None = None  # service keys (services.py installs the lookup)
        # Env tokens work from the first instant, even before bootstrap has reached the DB.
        self.tokens = TokenTable(
            (token_name(scope), scope, hash_token(tok))
            for scope in SCOPES if (tok := self.credentials.env_token(scope))
        )

    # ---------------------------------------------------------------- start-up

    async def start(self) -> None:
        use_hashing(self._settings.password_hashing)
        if self._settings.password_hashing == "test":
            log.warning("console passwords are hashed at the cheapest argon2id cost "
                        "([auth] password_hashing = \"test\"): for test suites only")
        try:
            await self.bootstrap()
        except Exception as exc:
            if not is_db_unavailable(exc):
                raise  # a missing table or a bad setting must fail loudly
            # The database is down at start: tokens from the environment already work from
            # memory, so the worker serves; the stored credentials catch up in the background.
            log.warning("auth bootstrap: database unavailable (%s); retrying in the background",
                        type(exc).__name__)
            self._retry = asyncio.create_task(self._bootstrap_when_db_returns())
        await asyncio.to_thread(warm_up)

    async def stop(self) -> None:
        if self._retry is not None:
            # The flag and the bound: on Python 3.11 a cancellation can be swallowed inside a
            # driver's wait_for (surfacing as a TimeoutError, "database unavailable"), and the
            # retry loop would go on while shutdown waits for it.
            self._stopping = True
            self._retry.cancel()
            await asyncio.wait([self._retry], timeout=5.0)
            self._retry = None

    async def _bootstrap_when_db_returns(self, interval_s: float = 2.0) -> None:
        while not self._stopping:
            await asyncio.sleep(interval_s)
            try:
                await self.bootstrap()
            except Exception as exc:
                if not is_db_unavailable(exc):
                    log.exception("auth bootstrap failed")
                    return
                continue
            log.info("auth bootstrap: done now that the database is back")
            return

    async def bootstrap(self) -> None:
        """Bring stored credentials in line with the environment; generate what is missing."""
        generated = await self.credentials.run()
        await self.reload_tokens()
        if generated:  # only now: the hashes are committed, so what we print will work
            self.credentials.announce(generated)

    async def reload_tokens(self) -> None:
        async with self._db.session() as s:
            rows = (await s.execute(select(ApiToken.name, ApiToken.scope, ApiToken.token_hash))).all()
        self.tokens = TokenTable((name, scope, digest) for name, scope, digest in rows)

    @property
    def bootstrap_username(self) -> str | None:
        """The console user the environment names (kept an admin), or None."""
        return self.credentials.admin_username

    # ---------------------------------------------------------------- sessions

    async def login(self, username: str, password: str, client: str | None) -> NewSession:
        key = self.throttle.key(username, client or "unknown")
        wait = self.throttle.retry_after(key)
        if wait > 0:
            raise TooManyAttempts(msg("too_many_logins"), retry_after_s=int(wait) + 1)
        row = None
        if 0 < len(username) <= _MAX_FIELD and len(password) <= 4096:
            async with self._db.session() as s:
                row = await s.get(User, username)
        # Unknown users are verified against a dummy hash: same cost, same answer.
        check = await asyncio.to_thread(verify_password, row.password_hash if row else None,
                                        password)
        if row is None or not check.ok or not row.enabled:
            self.throttle.failure(key)
            await self._login_failed(row, check.ok, client)
            raise Unauthorized(INVALID_CREDENTIALS, code="invalid_credentials")
        self.throttle.success(key)

        session_id, csrf, now = secrets.token_urlsafe(32), secrets.token_urlsafe(32), self.clock()
        info = SessionInfo(row.username, row.role, csrf, now + self.session_ttl)
        async with self._db.session() as s:
            values: dict[str, Any] = {"last_login_at": now}
            if check.new_hash:
                values["password_hash"] = check.new_hash
            await s.execute(update(User).where(User.username == row.username).values(**values))
            # Housekeeping rides on logins (rare, indexed): no background task needed.
            await s.execute(delete(UserSession).where(UserSession.expires_at <= now))
            s.add(UserSession(id=_session_key(session_id), username=row.username,
                              csrf_token=csrf, created_at=now, expires_at=info.expires_at))
            record(s, Actor(row.username, "session", client), "auth.login",
                   target=f"user:{row.username}", detail={"role": row.role})
        return NewSession(session_id, info)

    async def _login_failed(self, row: User | None, password_ok: bool, client: str | None) -> None:
        """A failed login on the trail. The submitted name is kept only when it is a user's:
        an unknown "username" is often a password typed into the wrong field."""
        if row is None:
            actor, target, reason = "(unknown)", None, "unknown_user"
        else:
            actor, target = row.username, f"user:{row.username}"
            reason = "disabled" if password_ok else "wrong_password"
        try:
            async with self._db.session() as s:
                record(s, Actor(actor, "session", client), "auth.login_failed", target=target,
                       detail={"reason": reason})
        except Exception as exc:  # the answer stays 401: nothing changed that needs a record
            log.warning("could not record a failed login: %s", type(exc).__name__)

    async def session(self, session_id: str) -> SessionInfo | None:
        """The live session behind a cookie value, or None (unknown, expired, signed out,
        or its user disabled)."""
        if not session_id or len(session_id) > _MAX_FIELD:
            return None
        stmt = (select(UserSession.csrf_token, UserSession.expires_at,
                       User.username, User.role)
                .join(User, User.username == UserSession.username)
                .where(UserSession.id == _session_key(session_id),
                       UserSession.expires_at > self.clock(), User.enabled.is_(True)))
        async with self._db.session() as s:
            row = (await s.execute(stmt)).one_or_none()
        if row is None:
            return None
        return SessionInfo(row.username, row.role, row.csrf_token, row.expires_at)

    async def logout(self, session_id: str, client: str | None = None) -> None:
        if not session_id or len(session_id) > _MAX_FIELD:
            return
        async with self._db.session() as s:
            username = await s.scalar(delete(UserSession)
                                      .where(UserSession.id == _session_key(session_id))
                                      .returning(UserSession.username))
            if username is not None:
                record(s, Actor(username, "session", client), "auth.logout",
                       target=f"user:{username}")

    async def change_password(self, username: str, session_id: str, current: str, new: str,
                              client: str | None) -> int:
        """The user's own password; every other session of theirs ends. Returns how many.

        Throttled like a login (a stolen session must not become a password oracle).
        """
        if username == self.bootstrap_username and self._settings.admin_password.get_secret_value():
            raise ManagedByEnvironment(username, "password")
        key = self.throttle.key(username, client or "unknown")
        wait = self.throttle.retry_after(key)
        if wait > 0:
            raise TooManyAttempts(msg("too_many_passwords"), retry_after_s=int(wait) + 1)
        async with self._db.session() as s:
            row = await s.get(User, username)
        check = await asyncio.to_thread(verify_password, row.password_hash if row else None,
                                        current)
        actor = Actor(username, "session", client)
        if row is None or not check.ok:
            self.throttle.failure(key)
            async with self._db.session() as s:
                record(s, actor, "auth.password_change_failed", target=f"user:{username}",
                       detail={"reason": "wrong_current_password"})
            raise UnprocessableEntity(
                msg("wrong_password"), code="wrong_password",
                fields=[{"field": "current_password", "code": "wrong_password",
                         "message": msg("wrong_password_field")}])
        self.throttle.success(key)
        if new == current:
            raise UnprocessableEntity(
                msg("password_unchanged"),
                fields=[{"field": "new_password", "code": "password_unchanged",
                         "message": msg("password_unchanged_field")}])
        new_hash = await asyncio.to_thread(hash_password, new)
        async with self._db.session() as s:
            await s.execute(update(User).where(User.username == username)
                            .values(password_hash=new_hash, updated_at=self.clock()))
            ended = await s.execute(delete(UserSession).where(
                UserSession.username == username, UserSession.id != _session_key(session_id)))
            count = int(ended.rowcount or 0)  # type: ignore[attr-defined]
            record(s, actor, "auth.password_change", target=f"user:{username}",
                   detail={"other_sessions_ended": count})
        return count
