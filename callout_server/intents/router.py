"""`/api/admin/nlu/global-intents`: operators write the list, viewers read it and try a
sentence against the rules."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from callout_server.api.deps import provide
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.intents.schemas import GlobalIntentsOut, GlobalIntentsPut, TryRequest, TryResult
from callout_server.intents.service import GlobalIntentService

router = APIRouter(prefix="/api/admin/nlu/global-intents", tags=["global intents"])
_ERR = {"model": dict[str, Any]}

Intents = Annotated[GlobalIntentService, Depends(provide(GlobalIntentService))]
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]


@router.get("", response_model=GlobalIntentsOut, responses={401: _ERR, 403: _ERR})
async def list_global_intents(_: Viewer, intents: Intents) -> GlobalIntentsOut:
    """The list every worker serves (config.toml's defaults, version 0, until a save)."""
    return intents.current()


@router.put("", response_model=GlobalIntentsOut,
            responses={401: _ERR, 403: _ERR, 409: _ERR, 422: _ERR, 503: _ERR})
async def replace_global_intents(body: GlobalIntentsPut, who: Operator,
                                 intents: Intents) -> GlobalIntentsOut:
    """The whole list with the `version` read (stale: 409 `version_conflict`); audited, and
    served by every worker within a second."""
    return await intents.replace(body, who.actor)


@router.post("/try", response_model=TryResult, responses={401: _ERR, 403: _ERR, 422: _ERR})
async def try_sentence(body: TryRequest, _: Viewer, intents: Intents) -> TryResult:
    """What the rules answer for one sentence and why (the phrase, the negation that stopped
    it); with `items`, for that unsaved list."""
    return intents.try_sentence(body)
