"""The people admin's errors (all `callout_server.errors.ApiError`)."""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound


class UserNotFound(NotFound):
    code = "user_not_found"

    def __init__(self, username: str) -> None:
        super().__init__(f"no user named {username!r}")


class UserExists(Conflict):
    code = "user_exists"

    def __init__(self, username: str) -> None:
        super().__init__(f"a user named {username!r} already exists", field="username")


class LastAdmin(Conflict):
    code = "last_admin"

    def __init__(self, username: str, what: str) -> None:
        super().__init__(f"{username!r} is the last enabled admin and cannot be {what}; "
                         "make someone else an admin first")
