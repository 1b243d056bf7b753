"""Errors of shadow evaluation; each carries its HTTP status and stable code.

    ApiError (callout_server.errors)
      EvaluationNotFound      404 not_found
      EvaluationRunning       409 evaluation_running     this worker runs one already
      EvaluationNotRunning    409 evaluation_not_running cancel of a finished evaluation
      InvalidCandidate        422 unknown_candidate | candidate_wrong_tier | candidate_is_active
      LimitTooLarge           422 validation_error       `limit` above [evaluation] max_calls
      NoTraffic               422 no_traffic             no recorded call matches the filter
"""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound, UnprocessableEntity


class EvaluationNotFound(NotFound):
    def __init__(self, evaluation_id: int) -> None:
        super().__init__(f"evaluation {evaluation_id} not found", evaluation_id=evaluation_id)


class EvaluationRunning(Conflict):
    code = "evaluation_running"

    def __init__(self, evaluation_id: int) -> None:
        super().__init__(
            f"evaluation {evaluation_id} is running on this worker; one runs at a time per "
            "worker (wait for it, or cancel it, then start the next)",
            evaluation_id=evaluation_id)


class EvaluationNotRunning(Conflict):
    code = "evaluation_not_running"

    def __init__(self, evaluation_id: int, status: str) -> None:
        super().__init__(f"evaluation {evaluation_id} is not running (it is {status})",
                         evaluation_id=evaluation_id, current_status=status)


class InvalidCandidate(UnprocessableEntity):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"candidate_id: {message}", code=code,
                         fields=[{"field": "candidate_id", "message": message}])


class LimitTooLarge(UnprocessableEntity):
    def __init__(self, max_calls: int) -> None:
        super().__init__(f"limit: at most {max_calls} calls ([evaluation] max_calls)",
                         fields=[{"field": "limit", "message": f"at most {max_calls}"}])


class NoTraffic(UnprocessableEntity):
    code = "no_traffic"

    def __init__(self, filters: list[str]) -> None:
        named = f" ({', '.join(filters)})" if filters else ""
        super().__init__(
            f"no recorded NLU calls match the filter{named}: nothing to replay. Inputs are "
            "kept [calllog] nlu_inputs_days (0 keeps none).",
            fields=[{"field": f, "message": "no recorded calls match"} for f in filters])
