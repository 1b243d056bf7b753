"""Ops' reads of the call log: `GET /api/admin/diagnostics` and `/summary`."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from callout_server.api.deps import Principal, get_services, require_admin
from callout_server.api.errors import UnprocessableEntity
from callout_server.api.params import BeforeId, Since, Until
from callout_server.calllog import repository
from callout_server.db.base import utcnow
from callout_server.services import Services

router = APIRouter(prefix="/api/admin/diagnostics", tags=["diagnostics"])

_WINDOW = re.compile(r"^(\d{1,4})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_window(window: str) -> timedelta:
    m = _WINDOW.match(window)
    if not m or int(m.group(1)) == 0:
        raise UnprocessableEntity("window: expected a duration such as 15m, 1h or 7d",
                                  fields=[{"field": "window", "message": "invalid duration"}])
    delta = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    if delta > timedelta(days=90):
        raise UnprocessableEntity("window: at most 90d",
                                  fields=[{"field": "window", "message": "at most 90d"}])
    return delta


@router.get("", responses={401: {}, 403: {}, 422: {}})
async def list_diagnostics(
    services: Annotated[Services, Depends(get_services)],
    _: Annotated[Principal, Depends(require_admin)],
    tier: Literal["nlu", "chat", "script"] | None = None,
    code: Annotated[str | None, Query(max_length=40)] = None,
    model: Annotated[str | None, Query(max_length=200)] = None,
    call_id: Annotated[str | None, Query(max_length=200)] = None,
    node_id: Annotated[str | None, Query(max_length=200)] = None,
    since: Since = None,
    until: Until = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: BeforeId = None,
) -> dict[str, Any]:
    async with services.db.session() as s:
        rows = await repository.list_records(
            s, limit=limit, before_id=before_id, since=since, until=until,
            tier=tier, code=code, model=model, call_id=call_id, node_id=node_id)
    items = [repository.record_dict(r) for r in rows]
    return {"items": items, "next_before_id": items[-1]["id"] if len(items) == limit else None}


@router.get("/summary", responses={401: {}, 403: {}, 422: {}})
async def diagnostics_summary(
    services: Annotated[Services, Depends(get_services)],
    _: Annotated[Principal, Depends(require_admin)],
    window: str = "1h",
) -> dict[str, Any]:
    since = utcnow() - parse_window(window)
    async with services.db.session() as s:
        tiers = await repository.summary(s, since)
    return {"window": window, "since": since.isoformat().replace("+00:00", "Z"),
            "tiers": tiers, "dropped": services.recorder.dropped}
