"""`/api/admin/llm-configs*`, `/api/admin/llm-active` and `/api/admin/vendors`: thin routes
over ConfigService (the vendor list is the client's dialect rows, built once)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from callout_server.api.deps import provide
from callout_server.api.params import RowId, Version
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.config.schemas import (
    ActiveOut,
    LLMConfigCreate,
    LLMConfigList,
    LLMConfigOut,
    LLMConfigUpdate,
    RevisionList,
)
from callout_server.config.service import ConfigService
from callout_server.config.vendors import VENDORS, VendorList

router = APIRouter(prefix="/api/admin", tags=["model configuration"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR}
_DB = {503: _ERR}
# Viewers read (keys masked); operators change configurations.
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]


Configs = Annotated[ConfigService, Depends(provide(ConfigService))]


@router.get("/llm-configs", response_model=LLMConfigList, responses={**_AUTH, **_DB})
async def list_configs(_: Viewer, configs: Configs) -> LLMConfigList:
    return await configs.list()


@router.post("/llm-configs", status_code=201, response_model=LLMConfigOut,
             responses={**_AUTH, **_DB, 409: _ERR, 422: _ERR})
async def create_config(body: LLMConfigCreate, who: Operator, configs: Configs) -> LLMConfigOut:
    return await configs.create(body, actor=who.actor)


@router.get("/llm-configs/{config_id}", response_model=LLMConfigOut,
            responses={**_AUTH, **_DB, 404: _ERR})
async def get_config(config_id: RowId, _: Viewer, configs: Configs) -> LLMConfigOut:
    return await configs.get(config_id)


@router.put("/llm-configs/{config_id}", response_model=LLMConfigOut,
            responses={**_AUTH, **_DB, 404: _ERR, 409: _ERR, 422: _ERR})
async def update_config(config_id: RowId, body: LLMConfigUpdate, who: Operator,
                        configs: Configs) -> LLMConfigOut:
    return await configs.update(config_id, body, actor=who.actor)


@router.delete("/llm-configs/{config_id}", status_code=204,
               responses={**_AUTH, **_DB, 404: _ERR, 409: _ERR})
async def delete_config(config_id: RowId, who: Operator, configs: Configs,
                        version: Version = None) -> Response:
    await configs.delete(config_id, actor=who.actor, version=version)
    return Response(status_code=204)


@router.post("/llm-configs/{config_id}/activate", response_model=LLMConfigOut,
             responses={**_AUTH, **_DB, 404: _ERR, 409: _ERR})
async def activate_config(config_id: RowId, who: Operator, configs: Configs) -> LLMConfigOut:
    return await configs.activate(config_id, actor=who.actor)


@router.post("/llm-configs/{config_id}/deactivate", response_model=LLMConfigOut,
             responses={**_AUTH, **_DB, 404: _ERR})
async def deactivate_config(config_id: RowId, who: Operator, configs: Configs) -> LLMConfigOut:
    """The tier serves its config.toml section again (docs/configuration.md)."""
    return await configs.deactivate(config_id, actor=who.actor)


@router.get("/llm-configs/{config_id}/revisions", response_model=RevisionList,
            responses={**_AUTH, **_DB, 404: _ERR})
async def config_revisions(config_id: RowId, _: Viewer, configs: Configs) -> RevisionList:
    return await configs.revisions(config_id)


@router.get("/llm-active", response_model=ActiveOut, responses=_AUTH)
async def active_configs(_: Viewer, configs: Configs) -> ActiveOut:
    return configs.active()


@router.get("/vendors", response_model=VendorList, responses=_AUTH)
async def vendors(_: Viewer) -> VendorList:
    return VENDORS
