"""Managing people: list, create, change role / password / state, delete. Drivable without HTTP.

Every write is one unit of work holding the change, the end of the user's sessions where
they lose access, and the audit event; a refused or failed write leaves all three undone.

Sessions follow the person: disabling, deleting or demoting a user, or resetting their
password, deletes their sessions in the same transaction, so their next request is a 401
on every worker (sessions are looked up in the database on each console request).

The last enabled admin stays: demoting, disabling or deleting them is a 409 `last_admin`.
Every update and delete first locks the enabled admins' rows (`FOR UPDATE`, in username
order, before the target's own row: one lock order, no deadlock), so two admins demoting
each other at once cannot both succeed on PostgreSQL; the second sees the first's result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.trail import Actor, record
from callout_server.auth.errors import ManagedByEnvironment
from callout_server.auth.models import User, UserSession
from callout_server.auth.passwords import hash_password
from callout_server.auth.roles import Role, role_rank
from callout_server.auth.service import AuthService
from callout_server.db.engine import Database
from callout_server.people.errors import AdminLoss, LastAdmin, UserExists, UserNotFound
from callout_server.people.schemas import UserCreate, UserList, UserOut, UserUpdate


def _view(row: User) -> UserOut:
    return UserOut(username=row.username, role=Role(row.role), disabled=not row.enabled,
                   created_at=row.created_at, last_login_at=row.last_login_at,
                   source=row.source)


class PeopleService:
    def __init__(self, db: Database, auth: AuthService) -> None:
        self._db = db
        self._auth = auth

    @asynccontextmanager
    async def _unit(self) -> AsyncIterator[AsyncSession]:
        # A database that cannot serve raises the session's DatabaseDown: a 503 for the caller.
        async with self._db.session() as s:
            yield s

    async def list(self) -> UserList:
        async with self._unit() as s:
            rows = (await s.scalars(select(User).order_by(User.username))).all()
        return UserList(items=[_view(r) for r in rows])

    async def create(self, body: UserCreate, actor: Actor) -> UserOut:
        password_hash = await asyncio.to_thread(hash_password, body.password)
        now = self._auth.clock()
        try:
            async with self._unit() as s:
                if await s.get(User, body.username) is not None:
                    raise UserExists(body.username)
                row = User(username=body.username, password_hash=password_hash,
                           role=body.role.value, source="console", enabled=True,
                           created_at=now, updated_at=now)
                s.add(row)
                await s.flush()
                record(s, actor, "user.create", target=f"user:{row.username}",
                       detail={"role": row.role})
        except IntegrityError as exc:  # created by someone else between the check and now
            raise UserExists(body.username) from exc
        return _view(row)

    async def update(self, username: str, body: UserUpdate, actor: Actor) -> UserOut:
        password_hash = (await asyncio.to_thread(hash_password, body.password)
                         if body.password is not None else None)
        async with self._unit() as s:
            admins = await self._lock_admins(s)
            row = await self._locked(s, username)
            old_role, old_enabled = row.role, row.enabled
            new_role = body.role.value if body.role is not None else old_role
            new_enabled = not body.disabled if body.disabled is not None else old_enabled
            self._check_bootstrap(row, new_role, new_enabled, password_hash is not None)
            if old_role == Role.admin and old_enabled and not (
                    new_role == Role.admin and new_enabled):
                self._keep_an_admin(admins, row, "demote" if new_enabled else "disable")

            detail: dict[str, Any] = {}
            if new_role != old_role:
                detail["role"] = {"old": old_role, "new": new_role}
            if new_enabled != old_enabled:
                detail["disabled"] = {"old": not old_enabled, "new": not new_enabled}
            if password_hash is not None:
                detail["password"] = "reset"
            if not detail:
                return _view(row)
            row.role, row.enabled = new_role, new_enabled
            if password_hash is not None:
                row.password_hash = password_hash
            row.updated_at = self._auth.clock()
            loses_access = (role_rank(new_role) < role_rank(old_role) or not new_enabled
                            or password_hash is not None)
            if loses_access:
                detail["sessions_ended"] = await self._end_sessions(s, username)
            record(s, actor, "user.update", target=f"user:{username}", detail=detail)
        return _view(row)

    async def delete(self, username: str, actor: Actor) -> None:
        async with self._unit() as s:
            admins = await self._lock_admins(s)
            row = await self._locked(s, username)
            if username == self._auth.bootstrap_username:
                raise ManagedByEnvironment(username, "account")
            if row.role == Role.admin and row.enabled:
                self._keep_an_admin(admins, row, "delete")
            ended = await self._end_sessions(s, username)
            await s.delete(row)
            record(s, actor, "user.delete", target=f"user:{username}",
                   detail={"role": row.role, "sessions_ended": ended})

    # -- rules -------------------------------------------------------------------------
    @staticmethod
    async def _locked(s: AsyncSession, username: str) -> User:
        row = await s.get(User, username, with_for_update=True)
        if row is None:
            raise UserNotFound(username)
        return row

    def _check_bootstrap(self, row: User, role: str, enabled: bool, password: bool) -> None:
        """The environment's admin stays an enabled admin; its env password is not ours."""
        if row.username != self._auth.bootstrap_username:
            return
        if role != Role.admin or not enabled:
            raise ManagedByEnvironment(row.username, "role")
        if password and row.source == "env":
            raise ManagedByEnvironment(row.username, "password")

    @staticmethod
    async def _lock_admins(s: AsyncSession) -> list[str]:
        """The enabled admins, their rows locked until the unit of work ends."""
        return list((await s.scalars(
            select(User.username).where(User.role == Role.admin.value, User.enabled.is_(True))
            .order_by(User.username).with_for_update())).all())

    @staticmethod
    def _keep_an_admin(admins: list[str], row: User, loss: AdminLoss) -> None:
        if not [a for a in admins if a != row.username]:
            raise LastAdmin(row.username, loss)

    @staticmethod
    async def _end_sessions(s: AsyncSession, username: str) -> int:
        result = await s.execute(delete(UserSession).where(UserSession.username == username))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
