"""What the server checks on the operator's behalf: `POST /api/admin/llm-configs/{id}/test`
(a stored configuration), `POST /api/admin/llm-configs/test` (the form before saving),
`POST /api/admin/llm-configs/models` (the models a base URL serves), `GET
/api/admin/upstreams` and the drains (`POST /api/admin/upstreams/drain`, `/undrain`: one
endpoint out of service in every worker, and back)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from callout_server.api.deps import provide
from callout_server.api.params import RowId
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.config.drains import DrainOut, DrainService, EndpointRef
from callout_server.config.schemas import (
    ConnectionDraft,
    ConnectionTestResult,
    ModelList,
    ModelsRequest,
)
from callout_server.connectivity.models import ModelLister
from callout_server.connectivity.service import ConnectionTester
from callout_server.connectivity.upstreams import UpstreamHealth, UpstreamList

router = APIRouter(prefix="/api/admin", tags=["model configuration"])
_ERR = {"model": dict[str, Any]}


@router.post("/llm-configs/test", response_model=ConnectionTestResult,
             responses={401: _ERR, 403: _ERR, 404: _ERR, 422: _ERR, 503: _ERR})
async def test_draft(body: ConnectionDraft,
                     _: Annotated[Principal, Depends(require_role(Role.operator))],
                     tester: Annotated[ConnectionTester, Depends(provide(ConnectionTester))],
                     ) -> ConnectionTestResult:
    """Test the form's values before saving (the stored key of `config_id` for its own host)."""
    return await tester.test_draft(body)


@router.post("/llm-configs/models", response_model=ModelList,
             responses={401: _ERR, 403: _ERR, 404: _ERR, 422: _ERR, 503: _ERR})
async def list_models(body: ModelsRequest,
                      _: Annotated[Principal, Depends(require_role(Role.operator))],
                      lister: Annotated[ModelLister, Depends(provide(ModelLister))]) -> ModelList:
    """The model ids `<base_url>/models` lists, fetched by the server (the key stays here)."""
    return await lister.models(body)


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


Drains = Annotated[DrainService, Depends(provide(DrainService))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]


@router.post("/upstreams/drain", response_model=DrainOut, tags=["diagnostics"],
             responses={401: _ERR, 403: _ERR, 404: _ERR, 422: _ERR, 503: _ERR})
async def drain_endpoint(body: EndpointRef, who: Operator, drains: Drains) -> DrainOut:
    """Take one endpoint out of service in every worker (requests in flight finish)."""
    return await drains.drain(body, who.actor)


@router.post("/upstreams/undrain", response_model=DrainOut, tags=["diagnostics"],
             responses={401: _ERR, 403: _ERR, 404: _ERR, 422: _ERR, 503: _ERR})
async def undrain_endpoint(body: EndpointRef, who: Operator, drains: Drains) -> DrainOut:
    """Put a drained endpoint back in service."""
    return await drains.undrain(body, who.actor)
