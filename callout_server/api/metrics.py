"""`GET /metrics`: this worker's Prometheus metrics (no auth, as the contract says).

Each worker exposes its own registry; scrape every worker (see the README) rather than
through the load balancer, or the series jump between workers.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["health"])


@router.get("/metrics", response_class=Response)
async def metrics() -> Response:
    # The configuration generation gauge is kept by a snapshot listener (services.py).
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
