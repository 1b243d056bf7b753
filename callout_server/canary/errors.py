"""Errors of canary rollout; each carries its HTTP status and stable code.

    ApiError (callout_server.errors)
      CanaryNotFound       404 not_found
      CanaryRunning        409 canary_running      one running canary per tier
      CanaryEnded          409 canary_ended        stop/promote of a canary that has ended
      ConfigInCanary       409 in_use              delete or re-tier a configuration in a canary
      CandidateInvalid     422 validation_error    candidate_id names no usable candidate
"""

from __future__ import annotations

from typing import Any

from callout_server.errors import Conflict, NotFound, UnprocessableEntity
from callout_server.i18n import msg


class CanaryNotFound(NotFound):
    def __init__(self, canary_id: int) -> None:
        super().__init__(msg("canary_not_found", canary_id=canary_id), canary_id=canary_id)


class CanaryRunning(Conflict):
    code = "canary_running"

    def __init__(self, *, tier: str, canary_id: int | None) -> None:
        super().__init__(msg("canary_running", tier=tier, canary_id=canary_id),
                         tier=tier, canary_id=canary_id)


class CanaryEnded(Conflict):
    code = "canary_ended"

    def __init__(self, canary_id: int, status: str) -> None:
        super().__init__(msg("canary_ended", canary_id=canary_id, status=status),
                         canary_id=canary_id, canary_status=status)


class ConfigInCanary(Conflict):
    code = "in_use"

    def __init__(self, config_id: int, canary_id: int, doing: str) -> None:
        # `doing`: "delete", "move" (another tier), "activate" or "deactivate"
        super().__init__(msg(f"canary_in_use_{doing}", config_id=config_id, canary_id=canary_id),
                         config_id=config_id, canary_id=canary_id)


class CandidateInvalid(UnprocessableEntity):
    """`candidate_id` names no configuration that can be a candidate (422 naming it)."""

    def __init__(self, *, code: str, **values: Any) -> None:
        reason = msg(code, **values)
        super().__init__(msg("field_invalid", field="candidate_id", reason=reason),
                         fields=[{"field": "candidate_id", "code": code, "message": reason}])
