"""Shadow evaluations: start one, read them, cancel one; drivable without HTTP.

One evaluation runs at a time per worker: a second `start()` on a worker that runs one is a
409 `evaluation_running` (refused, not queued: a queue would outlive nothing and hide work
behind a restart). Other workers may run their own.

Which worker runs what is in the row (`owner` = host:pid, `heartbeat_at` written with the
progress every `report_interval_s`). At start-up, and every few seconds after, a worker
marks `failed` whatever was `running` under its own host:pid (its previous life, restarted)
or has not reported for `stale_after_s` (a worker that died). A cancel reaches the running
worker at once when it is this one, else through `cancel_requested`, read with the next
progress write (under a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from callout_server.audit.trail import Actor, record
from callout_server.config.errors import ConfigNotFound
from callout_server.config.models import LLMConfigRow
from callout_server.config.service import ConfigService
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.db.retention import purge_before
from callout_server.evaluation import repository
from callout_server.evaluation.errors import (
    ConfigInEvaluation,
    EvaluationNotFound,
    EvaluationNotRunning,
    EvaluationRunning,
    InvalidCandidate,
    LimitTooLarge,
    NoTraffic,
)
from callout_server.evaluation.models import Evaluation, EvaluationResult
from callout_server.evaluation.runner import EvaluationRun
from callout_server.evaluation.schemas import (
    DisagreementPage,
    EvaluationCreate,
    EvaluationList,
    EvaluationOut,
    Progress,
    RecordedNode,
    RecordedNodes,
    Started,
)
from callout_server.evaluation.summary import summarize
from callout_server.llm import LLMConfig
from callout_server.tiers.nlu.service import NluService

log = logging.getLogger(__name__)

RESTART_REASON = "interrupted: the worker running it restarted or stopped"
SHUTDOWN_REASON = "interrupted: the worker running it shut down"
PURGE_INTERVAL_S = 3600.0


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


class EvaluationService:
    def __init__(self, db: Database, configs: ConfigService, nlu: NluService,
                 active_nlu_id: Callable[[], int | None], *, concurrency: int = 4,
                 max_calls: int = 5000, stale_after_s: float = 15.0,
                 inputs_days: int = 7, report_interval_s: float = 0.5,
                 max_rate: float = 20.0, busy_lag_s: float = 0.010,
                 purge_batch: int = 5000) -> None:
        self._db = db
        self._purge_batch = purge_batch
        self._configs = configs
        self._nlu = nlu
        self._active_nlu_id = active_nlu_id
        self.concurrency = concurrency
        self.max_calls = max_calls
        self._stale = timedelta(seconds=stale_after_s)
        self._inputs_days = inputs_days
        self._report_interval_s = report_interval_s
        self._busy_lag_s = busy_lag_s
        self.max_rate = max_rate
        self.owner = f"{socket.gethostname()}:{os.getpid()}"[:200]
        self._run: EvaluationRun | None = None
        self._lock = asyncio.Lock()  # one start at a time: the check and the claim together
        self._sweeper: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        with contextlib.suppress(Exception):  # database down at start: the sweeper retries
            await self.sweep()
        self._sweeper = asyncio.create_task(self._maintain(), name="evaluation-sweeper")

    async def stop(self, timeout_s: float = 5.0) -> None:
        """Cancel the running evaluation (it ends `failed`, saying why) and the sweeper."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.wait([self._sweeper], timeout=1.0)
            self._sweeper = None
        run = self._run
        if run is not None:
            run.stop("failed", SHUTDOWN_REASON)
            if not await run.wait(timeout_s):
                log.error("evaluation %s did not end in time; the next start marks it", run.id)

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSession]:
        # A database that cannot serve raises the session's DatabaseDown: a 503 for the caller.
        async with self._db.session() as s:
            yield s

    async def sweep(self) -> list[int]:
        """Mark failed what is `running` but runs nowhere (see the module docstring)."""
        async with self._lock:  # never between a start's insert and its claim of the run
            now = utcnow()
            # Our own host:pid marks a previous life only while this worker runs nothing.
            owner = self.owner if self._run is None else ""
            async with self._db.session() as s:
                ids = await repository.fail_interrupted(
                    s, owner=owner, stale_before=now - self._stale, reason=RESTART_REASON,
                    now=now)
        if ids:
            log.warning("evaluations %s were interrupted; marked failed", ids)
        return ids

    async def purge(self) -> int:
        """Per-call results quote customers' words: gone with the NLU inputs they came from."""
        return await purge_before(self._db, EvaluationResult,
                                  utcnow() - timedelta(days=self._inputs_days),
                                  batch=self._purge_batch)

    async def _maintain(self) -> None:
        tick = max(min(self._stale.total_seconds() / 3, 5.0), 0.2)
        next_purge = asyncio.get_running_loop().time() + PURGE_INTERVAL_S
        while True:
            await asyncio.sleep(tick)
            try:
                await self.sweep()
                if asyncio.get_running_loop().time() >= next_purge:
                    next_purge += PURGE_INTERVAL_S
                    await self.purge()
            except Exception as exc:
                log.warning("evaluation sweep failed: %s", type(exc).__name__)

    # -- start -----------------------------------------------------------------------------

    async def begin(self, body: EvaluationCreate, actor: Actor) -> Started:
        async with self._lock:
            if self._run is not None:
                raise EvaluationRunning(self._run.id)
            if body.limit > self.max_calls:
                raise LimitTooLarge(self.max_calls)
            candidate = await self._candidate(body.candidate_id)
            async with self._session() as s:
                ids = await repository.recent_input_ids(s, since=body.since,
                                                        node_id=body.node_id, limit=body.limit)
                if not ids:
                    raise NoTraffic([f for f in ("since", "node_id") if getattr(body, f)])
                now = utcnow()
                row = Evaluation(
                    status="running", candidate_id=body.candidate_id,
                    candidate_name=candidate.name[:128], candidate_model=candidate.model[:256],
                    since=body.since, node_id=body.node_id, limit=body.limit, total=len(ids),
                    done=0, owner=self.owner, heartbeat_at=now, created_by=actor.name[:128],
                    created_at=now)
                s.add(row)
                await s.flush()
                evaluation_id = row.id
                # Who replayed customers' words against which model: in the same transaction.
                record(s, actor, "evaluation.start", target=f"evaluation:{evaluation_id}",
                       detail={"candidate_id": body.candidate_id, "node_id": body.node_id,
                               "calls": len(ids)})
            run = EvaluationRun(evaluation_id, candidate, ids, nlu=self._nlu, db=self._db,
                                concurrency=self.concurrency,
                                max_rate=self.max_rate,
                                report_interval_s=self._report_interval_s,
                                busy_lag_s=self._busy_lag_s)
            self._run = run
            run.start().add_done_callback(lambda _: self._ended(run))
        log.info("evaluation %s started: %d calls against configuration %s",
                 evaluation_id, len(ids), body.candidate_id)
        return Started(id=evaluation_id, status="running")

    def _ended(self, run: EvaluationRun) -> None:
        if self._run is run:
            self._run = None

    async def _candidate(self, candidate_id: int) -> LLMConfig:
        try:
            candidate = await self._configs.resolve(candidate_id)
        except ConfigNotFound:
            raise InvalidCandidate(code="unknown_candidate", candidate_id=candidate_id) from None
        if candidate.tier != "nlu":
            raise InvalidCandidate(code="candidate_wrong_tier", candidate_id=candidate_id,
                                   tier=candidate.tier)
        if self._active_nlu_id() == candidate_id:
            raise InvalidCandidate(code="candidate_is_active", candidate_id=candidate_id)
        return candidate

    # -- for the configuration service (ConfigService.add_guard) ---------------------------
    async def guard(self, session: AsyncSession, row: LLMConfigRow, doing: str) -> None:
        """A running evaluation's candidate is neither deleted nor moved (409 `in_use`)."""
        if doing in ("delete", "move"):
            running = await repository.running_with(session, row.id)
            if running is not None:
                raise ConfigInEvaluation(row.id, running.id, doing)

    # -- cancel ----------------------------------------------------------------------------

    async def cancel(self, evaluation_id: int, actor: Actor | None = None,
                     timeout_s: float = 5.0) -> None:
        run = self._run
        if run is not None and run.id == evaluation_id:
            # Audited by the request that ended it: not by each of several at once, nor
            # when the run finished by itself in the meantime.
            if run.stop("cancelled") and actor is not None:
                async with self._session() as s:
                    record(s, actor, "evaluation.cancel", target=f"evaluation:{evaluation_id}")
            await run.wait(timeout_s)  # its end is written when this returns (bounded)
            return
        async with self._session() as s:
            row = await repository.get(s, evaluation_id)
            if row is None:
                raise EvaluationNotFound(evaluation_id)
            if row.status == "cancelled":
                return
            if row.status != "running":
                raise EvaluationNotRunning(evaluation_id, row.status)
            await repository.request_cancel(s, evaluation_id)
            if actor is not None:
                record(s, actor, "evaluation.cancel", target=f"evaluation:{evaluation_id}")

    # -- reads -----------------------------------------------------------------------------

    async def nodes(self, limit: int = 200) -> RecordedNodes:
        """The nodes with recorded calls to replay (the start form's node choice)."""
        async with self._session() as s:
            rows = await repository.recorded_nodes(s, limit=limit)
        return RecordedNodes(items=[RecordedNode(node_id=n, calls=c) for n, c in rows])

    async def list(self, limit: int = 50) -> EvaluationList:
        async with self._session() as s:
            rows = await repository.recent(s, limit)
        return EvaluationList(items=[self._view(r, r.summary) for r in rows])

    async def get(self, evaluation_id: int, *, disagreements_limit: int = 50,
                  node_id: str | None = None, quotes: bool = True) -> EvaluationOut:
        """`quotes` False (a viewer): no disagreements, which quote customers' words."""
        async with self._session() as s:
            row = await repository.get(s, evaluation_id)
            if row is None:
                raise EvaluationNotFound(evaluation_id)
            summary, page = row.summary, []
            # While it runs: progress only. The comparison is read once, at the end (a
            # console polling it every second would cost live calls event-loop time).
            if row.status != "running":
                if summary is None:  # interrupted before it could write one
                    stats = await repository.result_stats(s, evaluation_id)
                    summary = await asyncio.to_thread(summarize, stats)
                if quotes:
                    page = await repository.disagreements(
                        s, evaluation_id, after=None, limit=disagreements_limit,
                        node_id=node_id)
        out = self._view(row, summary)
        if not quotes:
            return out  # disagreements null
        out.disagreements = [disagreement(r) for r in page]
        out.disagreements_next = page[-1].id if len(page) == disagreements_limit else None
        return out

    async def disagreements(self, evaluation_id: int, *, after: int | None, limit: int,
                            node_id: str | None) -> DisagreementPage:
        async with self._session() as s:
            if await repository.get(s, evaluation_id) is None:
                raise EvaluationNotFound(evaluation_id)
            page = await repository.disagreements(s, evaluation_id, after=after, limit=limit,
                                                  node_id=node_id)
        return DisagreementPage(items=[disagreement(r) for r in page],
                                next_after=page[-1].id if len(page) == limit else None)

    def _view(self, row: Evaluation, summary: dict[str, Any] | None) -> EvaluationOut:
        run = self._run
        done = run.done if run is not None and run.id == row.id else row.done
        return EvaluationOut(
            id=row.id, status=row.status,  # type: ignore[arg-type]
            candidate_id=row.candidate_id,
            candidate={"name": row.candidate_name, "model": row.candidate_model},
            created_by=row.created_by, created_at=row.created_at, finished_at=row.finished_at,
            reason=row.reason,
            filter={"since": _iso(row.since), "node_id": row.node_id, "limit": row.limit},
            progress=Progress(done=done, total=row.total), summary=summary)


def disagreement(r: EvaluationResult) -> dict[str, Any]:
    return {
        "id": r.id, "at": _iso(r.at), "call_id": r.call_id, "node_id": r.node_id,
        "utterance": r.utterance,
        "recorded": {"intent": r.recorded_intent, "global_intent": r.recorded_global_intent,
                     "slots": r.recorded_slots, "fallback": r.recorded_fallback,
                     "code": r.recorded_code, "latency_ms": r.recorded_latency_ms},
        "candidate": {"intent": r.candidate_intent, "global_intent": r.candidate_global_intent,
                      "slots": r.candidate_slots, "fallback": r.candidate_fallback,
                      "code": r.candidate_code, "latency_ms": r.candidate_latency_ms},
        "intent_agrees": r.intent_agrees, "slots_agree": r.slots_agree,
    }
