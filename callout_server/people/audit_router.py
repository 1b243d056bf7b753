"""`GET /api/admin/audit`: the trail, newest first, keyset-paged, for admins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from callout_server.api.deps import provide
from callout_server.api.params import BeforeId, Since, Until
from callout_server.audit.log import AuditLog
from callout_server.audit.schemas import AuditPage
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role

router = APIRouter(prefix="/api/admin/audit", tags=["people"])
_ERR = {"model": dict[str, Any]}


@router.get("", response_model=AuditPage, responses={401: _ERR, 403: _ERR, 422: _ERR, 503: _ERR})
async def audit_trail(
    _: Annotated[Principal, Depends(require_role(Role.admin))],
    trail: Annotated[AuditLog, Depends(provide(AuditLog))],
    actor: Annotated[str | None, Query(max_length=128, description="who, exactly")] = None,
    action: Annotated[str | None, Query(
        max_length=64, description="`config.update`, or a family without a dot: `config`")] = None,
    target: Annotated[str | None, Query(max_length=256, description="e.g. `config:7`, `user:ana`")] = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: BeforeId = None,
) -> AuditPage:
    return await trail.page(limit=limit, before_id=before_id, actor=actor, action=action,
                            target=target, since=since, until=until)
