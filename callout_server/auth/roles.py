"""Roles and route access: the one table of who may call what.

    viewer < operator < admin     console users; the admin token counts as an admin
    service                       the dialer's token: the service routes only

Every route declares exactly one `Access` through its dependency (`auth.deps.require`), and
`tests/test_route_access.py` holds the table of every route's decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from callout_server.i18n import Msg, msg


class Role(StrEnum):
    viewer = "viewer"
    operator = "operator"
    admin = "admin"


ROLES: tuple[Role, ...] = tuple(Role)
SERVICE = "service"  # the role a service token acts with; not a console role
_RANK = {role: rank for rank, role in enumerate(ROLES)}


def role_rank(role: str) -> int:
    """viewer 0, operator 1, admin 2; -1 for anything else (the service token)."""
    return _RANK.get(role, -1)  # type: ignore[call-overload]


def role_name(role: str) -> Msg | str:
    """A console role's name in the reader's language (`viewer` is 只读); anything else as is."""
    return msg(f"role_{role}") if role in _RANK else role


@dataclass(frozen=True, slots=True)
class Access:
    """Who may call a route.

    `min_role`: console users (and the admin token, an admin) need at least this role;
    None lets any console user in. `service`: the service token passes. `tokens`: bearer
    tokens pass at all (False for what only a person can do, such as changing a password).
    """

    name: str
    min_role: Role | None
    service: bool = False
    tokens: bool = True

    def allows(self, role: str, via: str) -> bool:
        if role == SERVICE:
            return self.service
        if via == "token" and not self.tokens:
            return False
        return self.min_role is None or role_rank(role) >= role_rank(self.min_role)

    def refusal(self, role: str, via: str) -> Msg:
        """Why `role` (calling `via`) may not pass: rendered in the caller's language."""
        if role == SERVICE:
            return msg("forbidden_service", need=self.need())
        if via == "token" and not self.tokens:
            return msg("forbidden_session_only")
        return msg("forbidden_role", need=self.need(), role=role_name(role))

    def need(self) -> Msg:
        if self.min_role is None:
            return msg("need_console_user")
        return msg("need_role", role=role_name(self.min_role))


SIGNED_IN = Access("signed_in", None, service=True)          # who am I
CONSOLE_USER = Access("console_user", None, tokens=False)     # my own password
VIEWER = Access("viewer", Role.viewer)                         # reads
OPERATOR = Access("operator", Role.operator)                   # models, scripts
ADMIN = Access("admin", Role.admin)                            # people, the audit trail
# The dialer's routes (NLU, chat, script generation): the service token, the admin token,
# and console users who may call a model (operators and admins: the playground).
SERVICE_ROUTES = Access("service", Role.operator, service=True)

BY_ROLE: dict[Role, Access] = {Role.viewer: VIEWER, Role.operator: OPERATOR, Role.admin: ADMIN}
