"""`/api/admin/evaluations*`: thin routes over EvaluationService.

Admin credentials for now; with roles, starting and cancelling need `operator`, reading
`viewer` (the lead switches the dependencies).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response

from callout_server.api.deps import provide
from callout_server.api.params import RowId
from callout_server.auth.deps import Principal, require_role
from callout_server.auth.roles import Role, role_rank
from callout_server.evaluation.schemas import (
    DisagreementPage,
    EvaluationCreate,
    EvaluationList,
    EvaluationOut,
    RecordedNodes,
    Started,
)
from callout_server.evaluation.service import EvaluationService
from callout_server.validation import INT8_MAX

router = APIRouter(prefix="/api/admin/evaluations", tags=["shadow evaluation"])

_ERR = {"model": dict[str, Any]}
_AUTH = {401: _ERR, 403: _ERR}
Evaluations = Annotated[EvaluationService, Depends(provide(EvaluationService))]
Operator = Annotated[Principal, Depends(require_role(Role.operator))]  # replays call a model
Viewer = Annotated[Principal, Depends(require_role(Role.viewer))]
NodeFilter = Annotated[str | None, Query(min_length=1, max_length=200)]
PageLimit = Annotated[int, Query(ge=1, le=500)]


@router.post("", status_code=202, response_model=Started,
             responses={**_AUTH, 409: _ERR, 422: _ERR, 503: _ERR})
async def start_evaluation(body: EvaluationCreate, who: Operator,
                           evaluations: Evaluations) -> Started:
    return await evaluations.begin(body, who.actor)


@router.get("", response_model=EvaluationList, responses={**_AUTH, 422: _ERR, 503: _ERR})
async def list_evaluations(_: Viewer, evaluations: Evaluations,
                           limit: PageLimit = 50) -> EvaluationList:
    return await evaluations.list(limit)


@router.get("/nodes", response_model=RecordedNodes, responses={**_AUTH, 503: _ERR})
async def recorded_nodes(_: Viewer, evaluations: Evaluations) -> RecordedNodes:
    """The nodes whose recorded calls can be replayed, busiest first (up to 200)."""
    return await evaluations.nodes()


@router.get("/{evaluation_id}", response_model=EvaluationOut,
            responses={**_AUTH, 404: _ERR, 422: _ERR, 503: _ERR})
async def get_evaluation(evaluation_id: RowId, who: Viewer, evaluations: Evaluations,
                         node_id: NodeFilter = None,
                         disagreements_limit: PageLimit = 50) -> EvaluationOut:
    # Disagreements quote customers' words: operators and admins read them, viewers get
    # the summary with `disagreements` null (docs/auth.md, docs/privacy.md).
    quotes = role_rank(who.role) >= role_rank(Role.operator)
    return await evaluations.get(evaluation_id, disagreements_limit=disagreements_limit,
                                 node_id=node_id, quotes=quotes)


@router.get("/{evaluation_id}/disagreements", response_model=DisagreementPage,
            responses={**_AUTH, 404: _ERR, 422: _ERR, 503: _ERR})
async def evaluation_disagreements(
    evaluation_id: RowId, _: Operator, evaluations: Evaluations, node_id: NodeFilter = None,
    after: Annotated[int | None, Query(ge=1, le=INT8_MAX)] = None, limit: PageLimit = 50,
) -> DisagreementPage:
    """Operators and admins: the rows quote customers' words (redacted of personal data)."""
    return await evaluations.disagreements(evaluation_id, after=after, limit=limit,
                                           node_id=node_id)


@router.post("/{evaluation_id}/cancel", status_code=204,
             responses={**_AUTH, 404: _ERR, 409: _ERR, 503: _ERR})
async def cancel_evaluation(evaluation_id: RowId, who: Operator,
                            evaluations: Evaluations) -> Response:
    await evaluations.cancel(evaluation_id, who.actor)
    return Response(status_code=204)
