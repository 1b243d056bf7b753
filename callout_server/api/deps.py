"""Route dependencies: the worker's services and the caller's identity.

`require_admin` / `require_service` are implemented by the auth package; routes only
declare them. Service-scope checks run on the dialer's hot path, so they never query the
database (token hashes are held in memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from fastapi import Request

if TYPE_CHECKING:
    from callout_server.services import Services

Role = Literal["admin", "service"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a console user (via session cookie) or an API token."""

    name: str
    role: Role
    via: Literal["session", "token"]


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


async def require_admin(request: Request) -> Principal:
    """Admin scope: console session (CSRF-checked on writes) or the admin bearer token."""
    raise NotImplementedError("auth package not wired yet")


async def require_service(request: Request) -> Principal:
    """Service scope (/api/nlu, /api/chat, /api/scripts): service or admin bearer token, or a console session."""
    raise NotImplementedError("auth package not wired yet")
