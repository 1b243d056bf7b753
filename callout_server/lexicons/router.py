"""`/api/admin/lexicons*`: thin routes over LexiconService (viewers read, operators write)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Response

from callout_server.api.deps import provide
from callout_server.api.params import Version
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.lexicons.schemas import (
    NAME_PATTERN,
    LexiconIn,
    LexiconList,
    LexiconOut,
    TryRequest,
    TryResult,
)
from callout_server.lexicons.service import LexiconService

router = APIRouter(prefix="/api/admin/lexicons", tags=["speech guards"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR}
_DB = {503: _ERR}
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]
Lexicons = Annotated[LexiconService, Depends(provide(LexiconService))]
Name = Annotated[str, Path(pattern=NAME_PATTERN, description="the lexicon's name")]


@router.get("", response_model=LexiconList, responses={**_AUTH, **_DB})
async def list_lexicons(_: Viewer, lexicons: Lexicons) -> LexiconList:
    return await lexicons.list()


@router.post("/try", response_model=TryResult, responses={**_AUTH, 422: _ERR})
async def try_sentence(body: TryRequest, _: Viewer, lexicons: Lexicons) -> TryResult:
    """What the guard would do with one sentence (this worker's live lexicons)."""
    return lexicons.try_sentence(body)


@router.get("/{name}", response_model=LexiconOut, responses={**_AUTH, **_DB, 404: _ERR})
async def get_lexicon(name: Name, _: Viewer, lexicons: Lexicons) -> LexiconOut:
    return await lexicons.get(name)


@router.put("/{name}", response_model=LexiconOut,
            responses={**_AUTH, **_DB, 201: {"model": LexiconOut}, 409: _ERR, 422: _ERR})
async def put_lexicon(name: Name, body: LexiconIn, who: Operator, lexicons: Lexicons,
                      response: Response) -> LexiconOut:
    """Create (201) or replace (200) a lexicon; `version` (the one read) guards the write."""
    out, created = await lexicons.put(name, body, who.actor)
    response.status_code = 201 if created else 200
    return out


@router.delete("/{name}", status_code=204,
               responses={**_AUTH, **_DB, 404: _ERR, 409: _ERR, 422: _ERR})
async def delete_lexicon(name: Name, who: Operator, lexicons: Lexicons,
                         version: Version = None) -> Response:
    await lexicons.delete(name, version, who.actor)
    return Response(status_code=204)
