"""`/api/admin/service-keys`: thin routes over ServiceKeyService, for admins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from callout_server.api.deps import provide
from callout_server.api.params import RowId
from callout_server.auth.deps import Principal, require_admin
from callout_server.service_keys.schemas import KeyCreate, KeyCreated, KeyList, KeyOut, KeyUpdate
from callout_server.service_keys.service import ServiceKeyService

router = APIRouter(prefix="/api/admin/service-keys", tags=["service keys"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR, 503: _ERR}
Admin = Annotated[Principal, Depends(require_admin)]
Keys = Annotated[ServiceKeyService, Depends(provide(ServiceKeyService))]


@router.get("", response_model=KeyList, responses=_AUTH)
async def list_keys(_: Admin, keys: Keys) -> KeyList:
    return await keys.list()


@router.post("", status_code=201, response_model=KeyCreated, responses={**_AUTH, 422: _ERR})
async def create_key(body: KeyCreate, who: Admin, keys: Keys) -> KeyCreated:
    return await keys.create(body, who.actor)


@router.put("/{key_id}", response_model=KeyOut,
            responses={**_AUTH, 404: _ERR, 409: _ERR, 422: _ERR})
async def update_key(key_id: RowId, body: KeyUpdate, who: Admin, keys: Keys) -> KeyOut:
    return await keys.update(key_id, body, who.actor)


@router.delete("/{key_id}", status_code=204, responses={**_AUTH, 404: _ERR})
async def revoke_key(key_id: RowId, who: Admin, keys: Keys) -> Response:
    await keys.revoke(key_id, who.actor)
    return Response(status_code=204)
