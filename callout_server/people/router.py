"""`/api/admin/users`: thin routes over PeopleService, for admins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Response

from callout_server.api.deps import provide
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.people.schemas import UserCreate, UserList, UserOut, UserUpdate
from callout_server.people.service import PeopleService

router = APIRouter(prefix="/api/admin/users", tags=["people"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR, 503: _ERR}
Admin = Annotated[Principal, Depends(require_role(Role.admin))]
People = Annotated[PeopleService, Depends(provide(PeopleService))]
UsernamePath = Annotated[str, Path(min_length=1, max_length=128)]


@router.get("", response_model=UserList, responses=_AUTH)
async def list_users(_: Admin, people: People) -> UserList:
    return await people.list()


@router.post("", status_code=201, response_model=UserOut,
             responses={**_AUTH, 409: _ERR, 422: _ERR})
async def create_user(body: UserCreate, who: Admin, people: People) -> UserOut:
    return await people.create(body, who.actor)


@router.put("/{username}", response_model=UserOut,
            responses={**_AUTH, 404: _ERR, 409: _ERR, 422: _ERR})
async def update_user(username: UsernamePath, body: UserUpdate, who: Admin,
                      people: People) -> UserOut:
    return await people.update(username, body, who.actor)


@router.delete("/{username}", status_code=204, responses={**_AUTH, 404: _ERR, 409: _ERR})
async def delete_user(username: UsernamePath, who: Admin, people: People) -> Response:
    await people.delete(username, who.actor)
    return Response(status_code=204)
