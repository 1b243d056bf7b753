"""The people admin's errors (all `callout_server.errors.ApiError`), worded from the catalogue."""

from __future__ import annotations

from typing import Literal

from callout_server.errors import Conflict, NotFound
from callout_server.i18n import msg

# What removing the last enabled admin would take: its message names it.
AdminLoss = Literal["demote", "disable", "delete"]


class UserNotFound(NotFound):
    code = "user_not_found"

    def __init__(self, username: str) -> None:
        super().__init__(msg("user_not_found", username=username))


class UserExists(Conflict):
    code = "user_exists"

    def __init__(self, username: str) -> None:
        super().__init__(msg("user_exists", username=username), field="username")


_LAST_ADMIN = {"demote": "last_admin_demote", "disable": "last_admin_disable",
               "delete": "last_admin_delete"}


class LastAdmin(Conflict):
    code = "last_admin"

    def __init__(self, username: str, loss: AdminLoss) -> None:
        super().__init__(msg(_LAST_ADMIN[loss], username=username))
