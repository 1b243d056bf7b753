"""`POST /api/admin/llm-configs/{id}/test` and `GET /api/admin/upstreams`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from callout_server.api.deps import provide
from callout_server.api.params import RowId
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.config.schemas import ConnectionTestResult
from callout_server.connectivity.service import ConnectionTester
from callout_server.connectivity.upstreams import UpstreamHealth, UpstreamList

router = APIRouter(prefix="/api/admin", tags=["model configuration"])
_ERR = {"model": dict[str, Any]}


@router.post("/llm-configs/{config_id}/test", response_model=ConnectionTestResult,
             responses={401: _ERR, 403: _ERR, 404: _ERR, 503: _ERR})
async def test_config(config_id: RowId, _: Annotated[Principal, Depends(require_role(Role.operator))],
                      tester: Annotated[ConnectionTester, Depends(provide(ConnectionTester))],
                      ) -> ConnectionTestResult:
    return await tester.test(config_id)


@router.get("/upstreams", response_model=UpstreamList, responses={401: _ERR, 403: _ERR},
            tags=["diagnostics"])
async def upstreams(_: Annotated[Principal, Depends(require_role(Role.viewer))],
                    health: Annotated[UpstreamHealth, Depends(provide(UpstreamHealth))],
                    ) -> UpstreamList:
    return health.items()
