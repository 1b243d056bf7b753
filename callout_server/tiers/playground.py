"""The console's playground: a tier's call with any of its configurations, never live traffic.

    POST /api/admin/playground/nlu?config_id=7      body: the decide request   -> Decision
    POST /api/admin/playground/script?config_id=9   body: the generate request -> as generate
    POST /api/admin/playground/chat/sessions?config_id=3   body: a session  -> 201 the session
                                               (its turns then go to /api/chat/sessions/...)

The body is exactly the public route's (`/api/nlu/decide`, `/api/scripts/generate`), so what
the console tries is what a dialer would send (the console's "copy as curl" writes the
public call); `config_id` picks a stored configuration of the tier, active or not (absent:
the active one, with its pool). Operators and admins only. Every call is recorded with
`source: "playground"`: left out of the live summary and metrics, and an NLU decision's
inputs are never kept, so shadow evaluation never replays a try-out as a customer's words.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from callout_server.api.deps import provide
from callout_server.api.sse import sse_response, until_closing
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role
from callout_server.config.service import ConfigService
from callout_server.errors import UnprocessableEntity
from callout_server.i18n import msg
from callout_server.streams import Closing
from callout_server.tiers.chat import calls
from callout_server.tiers.chat.schemas import SessionCreate, SessionView
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.nlu.schemas import DecideRequest, Decision
from callout_server.tiers.nlu.service import NluService
from callout_server.tiers.script.schemas import GenerateRequest, GenerateResult
from callout_server.tiers.script.service import ScriptService, cancelled_events
from callout_server.upstream import Route

PLAYGROUND = "playground"

router = APIRouter(prefix="/api/admin/playground", tags=["playground"])

Operator = Annotated[Principal, Depends(require_role(Role.operator))]
Configs = Annotated[ConfigService, Depends(provide(ConfigService))]
ConfigId = Annotated[int | None, Query(ge=1, le=2**63 - 1,
                                       description="a configuration of the tier; absent: the active one")]
_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {}, 403: {}, 404: {"description": "`not_found`: no such configuration"},
    422: {"description": "`config_wrong_tier`, or the body as the public route refuses it"},
    502: {}, 504: {}}


class ConfigWrongTier(UnprocessableEntity):
    def __init__(self, config_id: int, tier: str, wanted: str) -> None:
        reason = msg("playground_wrong_tier", config_id=config_id, tier=tier, wanted=wanted)
        super().__init__(msg("field_invalid", field="config_id", reason=reason),
                         code="config_wrong_tier",
                         fields=[{"field": "config_id", "code": "config_wrong_tier",
                                  "message": reason}])


async def _route(configs: ConfigService, config_id: int | None, tier: str) -> Route | None:
    if config_id is None:
        return None  # the tier's active configuration, with its pool
    cfg = await configs.resolve(config_id)
    if cfg.tier != tier:
        raise ConfigWrongTier(config_id, cfg.tier, tier)
    return Route.of(cfg)


@router.post("/nlu", responses=_ERRORS)
async def try_nlu(body: DecideRequest, configs: Configs, _: Operator,
                  nlu: Annotated[NluService, Depends(provide(NluService))],
                  config_id: ConfigId = None) -> Decision:
    route = await _route(configs, config_id, "nlu")
    return await nlu.decide(body, route=route, source=PLAYGROUND)


@router.post("/script", response_model=None,
             responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
async def try_script(body: GenerateRequest, configs: Configs, who: Operator,
                     scripts: Annotated[ScriptService, Depends(provide(ScriptService))],
                     closing: Annotated[Closing, Depends(provide(Closing))],
                     config_id: ConfigId = None) -> GenerateResult | StreamingResponse:
    route = await _route(configs, config_id, "script")
    if body.stream:
        return sse_response(until_closing(
            scripts.stream(body, who.actor, route=route, source=PLAYGROUND), closing,
            cancelled_events))
    return await scripts.generate(body, who.actor, route=route, source=PLAYGROUND)


@router.post("/chat/sessions", status_code=201,
             responses={**_ERRORS, 409: {"description": "`session_exists`"},
                        503: {"description": "`too_many_sessions`"}})
async def try_chat(body: SessionCreate, configs: Configs, _: Operator,
                   chat: Annotated[ChatService, Depends(provide(ChatService))],
                   config_id: ConfigId = None) -> SessionView:
    """A chat session whose turns use the chosen configuration (the public turn, cancel and
    tool-output routes drive it, on this worker); its calls are recorded as playground."""
    route = await _route(configs, config_id, "chat")
    return await calls.create(chat, body, PLAYGROUND, route)
