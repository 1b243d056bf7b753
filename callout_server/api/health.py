"""`GET /healthz`: liveness plus what this worker is serving."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(request: Request) -> dict[str, Any]:
    services = request.app.state.services
    health = getattr(services, "health", None)
    if health is None:
        return {"status": "ok", "db": "ok", "redis": "disabled", "config_generation": 0}
    return await health()
