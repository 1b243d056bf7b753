"""Errors of shadow evaluation; each carries its HTTP status and stable code.

    ApiError (callout_server.errors)
      EvaluationNotFound      404 not_found
      EvaluationRunning       409 evaluation_running     this worker runs one already
      EvaluationNotRunning    409 evaluation_not_running cancel of a finished evaluation
      ConfigInEvaluation      409 in_use                 delete or re-tier a running one's candidate
      InvalidCandidate        422 unknown_candidate | candidate_wrong_tier | candidate_is_active
      LimitTooLarge           422 validation_error       `limit` above [evaluation] max_calls
      NoTraffic               422 no_traffic             no recorded call matches the filter
"""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound, UnprocessableEntity
from callout_server.i18n import msg


class EvaluationNotFound(NotFound):
    def __init__(self, evaluation_id: int) -> None:
        super().__init__(msg("evaluation_not_found", evaluation_id=evaluation_id),
                         evaluation_id=evaluation_id)


class EvaluationRunning(Conflict):
    code = "evaluation_running"

    def __init__(self, evaluation_id: int) -> None:
        super().__init__(msg("evaluation_running", evaluation_id=evaluation_id),
                         evaluation_id=evaluation_id)


class ConfigInEvaluation(Conflict):
    """A running evaluation replays customers' words to its candidate: while it runs, the
    candidate is neither deleted nor moved to another tier."""

    code = "in_use"

    def __init__(self, config_id: int, evaluation_id: int, doing: str) -> None:
        super().__init__(msg(f"evaluation_in_use_{doing}", config_id=config_id,
                             evaluation_id=evaluation_id),
                         config_id=config_id, evaluation_id=evaluation_id)


class EvaluationNotRunning(Conflict):
    code = "evaluation_not_running"

    def __init__(self, evaluation_id: int, status: str) -> None:
        super().__init__(msg("evaluation_not_running", evaluation_id=evaluation_id,
                             status=status),
                         evaluation_id=evaluation_id, current_status=status)


class InvalidCandidate(UnprocessableEntity):
    """`code`: unknown_candidate | candidate_wrong_tier | candidate_is_active."""

    def __init__(self, *, code: str, candidate_id: int, tier: str | None = None) -> None:
        reason = msg(code, candidate_id=candidate_id, tier=tier)
        super().__init__(msg("field_invalid", field="candidate_id", reason=reason), code=code,
                         fields=[{"field": "candidate_id", "code": code, "message": reason}])


class LimitTooLarge(UnprocessableEntity):
    def __init__(self, max_calls: int) -> None:
        reason = msg("evaluation_limit", max_calls=max_calls)
        super().__init__(msg("field_invalid", field="limit", reason=reason),
                         fields=[{"field": "limit", "code": "evaluation_limit",
                                  "message": reason}])


class NoTraffic(UnprocessableEntity):
    code = "no_traffic"

    def __init__(self, filters: list[str]) -> None:
        super().__init__(msg("no_traffic", filters=", ".join(filters) or "-"),
                         fields=[{"field": f, "code": "no_traffic",
                                  "message": msg("no_traffic_field")} for f in filters])
