"""The auth package's own errors (all `callout_server.errors.ApiError`), worded from the catalogue."""

from __future__ import annotations

from typing import Literal

from callout_server.errors import ApiError, Conflict
from callout_server.i18n import msg

# What of the bootstrap admin the environment sets: its message names it.
EnvManaged = Literal["account", "role", "password"]
_ENV_MANAGED = {"account": "env_managed_account", "role": "env_managed_role",
                "password": "env_managed_password"}


class TooManyAttempts(ApiError):
    status, code = 429, "too_many_attempts"


class ManagedByEnvironment(Conflict):
    """The bootstrap admin's role, state and password come from the environment."""

    code = "managed_by_environment"

    def __init__(self, username: str, what: EnvManaged) -> None:
        super().__init__(msg(_ENV_MANAGED[what], username=username))
