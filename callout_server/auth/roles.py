"""Roles and route access: the one table of who may call what.

    viewer < operator < admin     console users; the admin token counts as an admin
    service                       the dialer's token: the service routes only

Every route declares exactly one `Access` through its dependency (`auth.deps.require`), and
`tests/test_route_access.py` holds the table of every route's decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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

    def refusal(self, role: str, via: str) -> str:
        if role == SERVICE:
            return "this route is not open to the service token; it needs " + self.need()
        if via == "token" and not self.tokens:
            return "only a console user signed in with a session can do this"
        article = "an" if role[:1] in "aeiou" else "a"
        return f"this route needs {self.need()}; you are {article} {role}"

    def need(self) -> str:
        if self.min_role is None:
            return "a console user"
        return f"the {self.min_role.value} role"


SIGNED_IN = Access("signed_in", None, service=True)          # who am I
CONSOLE_USER = Access("console_user", None, tokens=False)     # my own password
VIEWER = Access("viewer", Role.viewer)                         # reads
OPERATOR = Access("operator", Role.operator)                   # models, scripts
ADMIN = Access("admin", Role.admin)                            # people, the audit trail
# The dialer's routes (NLU, chat, script generation): the service token, the admin token,
# and console users who may call a model (operators and admins: the playground).
SERVICE_ROUTES = Access("service", Role.operator, service=True)

BY_ROLE: dict[Role, Access] = {Role.viewer: VIEWER, Role.operator: OPERATOR, Role.admin: ADMIN}
