"""Bodies and views of `/api/admin/users`."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from callout_server.auth.policy import NewPassword, Username
from callout_server.auth.roles import Role
from callout_server.validation import RequestModel


class UserOut(BaseModel):
    username: str
    role: Role
    disabled: bool
    created_at: datetime
    last_login_at: datetime | None
    # `env`: the bootstrap admin (role, state and password set by the environment);
    # `generated`: made at first start; `console`: created here.
    source: str


class UserList(BaseModel):
    items: list[UserOut]


class UserCreate(RequestModel):
    username: Username
    password: NewPassword
    role: Role


class UserUpdate(RequestModel):
    """Any of the three; what is left out stays as it is."""

    role: Role | None = None
    password: NewPassword | None = None
    disabled: bool | None = None
