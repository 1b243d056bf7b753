"""One evaluation's replay loop: recorded decisions -> the candidate -> compared results.

    loader   reads the recorded inputs a page at a time into a small queue
    workers  `concurrency` of them, each: one `NluService.replay()` at a time, then compares;
             together at most `max_rate` replays started per second (`Pacer`)
    watch    every `report_interval_s`: writes the buffered results, progress and heartbeat
             in one transaction, and learns whether a cancel was asked for on another worker

Live traffic always wins. A replay costs this worker's event loop what a live decision costs
(it is one, sent elsewhere), so what bounds its effect on live calls is how many replays run
per second: at most `max_rate` start per second, and at most `concurrency` are in flight (a
slow candidate is bounded by the latter). They share nothing a live call waits for (no lock,
no queue; the connection pool has room for hundreds), each worker yields to the event loop
between calls, and no replay starts while the event loop runs late (`LoopLag`: timers more
than `busy_lag` behind means live requests are queueing for this worker's one thread; the
replays wait until it keeps up again). The database sees one small write per interval,
never one per call. `bench/bench_evaluation.py` measures the effect.

Stopping is one path, the task's cancellation (`stop()`): the workers' in-flight upstream
requests are closed at once (cancelling `complete()` closes its connection), then what was
replayed is written and the evaluation ends `cancelled` (or `failed` with the reason when the
worker shuts down). A bug ends it `failed` too; it is never left `running`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from callout_server import privacy
from callout_server.calllog.inputs import storable_json
from callout_server.db.base import utcnow
from callout_server.db.engine import Database
from callout_server.evaluation import repository
from callout_server.evaluation.compare import compare
from callout_server.evaluation.redact import redact_rows
from callout_server.evaluation.summary import summarize
from callout_server.llm import LLMConfig
from callout_server.tiers.nlu.schemas import DecideRequest
from callout_server.tiers.nlu.service import NluService, Outcome

log = logging.getLogger(__name__)

# Recorded inputs read at a time: small, so each read is a short slice of the event loop.
PAGE = 50
# Finishing writes (results, summary, status) get this long even when stopping.
FINISH_TIMEOUT_S = 10.0
# The event loop this far behind: live work is queueing, replays hold back.
BUSY_LAG_S = 0.010
# Often enough to notice a busy spell, rarely enough to cost nothing (20 wake-ups a second).
LAG_PERIOD_S = 0.050


class Pacer:
    """At most `rate` starts per second across the workers that share it (no burst)."""

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate
        self._next = 0.0

    async def wait_turn(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        at = max(self._next, now)
        self._next = at + self._interval
        if at > now:
            await asyncio.sleep(at - now)


class LoopLag:
    """How late this event loop runs a timer: the sign that live requests wait for it."""

    def __init__(self, period_s: float = LAG_PERIOD_S, busy_s: float = BUSY_LAG_S) -> None:
        self._period_s = period_s
        self._busy_s = busy_s
        self.lag_s = 0.0
        self._ok = asyncio.Event()
        self._ok.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            await asyncio.sleep(self._period_s)
            self.lag_s = max(loop.time() - started - self._period_s, 0.0)
            if self.lag_s > self._busy_s:
                self._ok.clear()
            else:
                self._ok.set()

    async def wait_calm(self) -> None:
        await self._ok.wait()


class EvaluationRun:
    def __init__(self, evaluation_id: int, candidate: LLMConfig, input_ids: Sequence[int], *,
                 nlu: NluService, db: Database, concurrency: int,
                 max_rate: float = 20.0, report_interval_s: float = 0.5,
                 busy_lag_s: float = BUSY_LAG_S) -> None:
        self.id = evaluation_id
        self._candidate = candidate
        self._ids = list(input_ids)
        self._nlu = nlu
        self._db = db
        self._concurrency = concurrency
        self._report_interval_s = report_interval_s
        self._buffer: list[dict[str, Any]] = []
        self._writing: asyncio.Task[bool] | None = None  # the progress write under way
        self.done = 0  # replayed or skipped, written or not
        self._skipped = 0
        self._stop: tuple[str, str | None] = ("cancelled", None)
        self._stopped = False  # stop() has ended it
        self._finishing = False
        self._task: asyncio.Task[None] | None = None
        self._lag = LoopLag(busy_s=busy_lag_s)
        self._pacer = Pacer(max_rate)

    @property
    def total(self) -> int:
        return len(self._ids)

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self._run(), name=f"evaluation-{self.id}")
        return self._task

    def stop(self, status: str = "cancelled", reason: str | None = None) -> bool:
        """End the run now: in-flight replays are cancelled (their connections closed).
        True when this call ended it (not one before it, nor the run's own finish)."""
        if self._task is not None and not self._task.done() and not self._finishing \
                and not self._stopped:
            self._stopped = True
            self._stop = (status, reason)
            self._task.cancel()
            return True
        return False

    async def wait(self, timeout_s: float) -> bool:
        """Wait for the run to have written its end; False if it did not within the time."""
        if self._task is None:
            return True
        done, _ = await asyncio.wait([self._task], timeout=timeout_s)
        return bool(done)

    # -- the run ---------------------------------------------------------------------------

    async def _run(self) -> None:
        status, reason = "done", None
        try:
            queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=2 * self._concurrency)
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._load(queue))
                workers = [tg.create_task(self._work(queue)) for _ in range(self._concurrency)]
                watch = tg.create_task(self._watch())
                lag = tg.create_task(self._lag.run())
                await asyncio.gather(*workers)
                watch.cancel()
                lag.cancel()
        except asyncio.CancelledError:
            status, reason = self._stop
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # stopping on purpose: the end is written below
        except Exception as exc:  # a bug or the database: say so, never stay "running"
            log.exception("evaluation %s failed", self.id)
            status, reason = "failed", f"internal error ({type(exc).__name__})"
        self._finishing = True  # the end is written whatever asks to stop now
        await self._finish(status, reason)

    async def _load(self, queue: asyncio.Queue[Any]) -> None:
        for start in range(0, len(self._ids), PAGE):
            async with self._db.session() as s:
                rows = await repository.inputs(s, self._ids[start:start + PAGE])
            for row in rows:
                await queue.put(row)
            # Purged between the pick and the read: counted as skipped, not waited for.
            missing = min(PAGE, len(self._ids) - start) - len(rows)
            self._skipped += missing
            self.done += missing
        for _ in range(self._concurrency):
            await queue.put(None)

    async def _work(self, queue: asyncio.Queue[Any]) -> None:
        while (row := await queue.get()) is not None:
            try:
                req = DecideRequest.model_validate(
                    {**row.inputs, "call_id": row.call_id, "node_id": row.node_id})
            except ValidationError:  # kept by a version whose request shape differed
                self._skipped += 1
                self.done += 1
                continue
            await self._pacer.wait_turn()
            await self._lag.wait_calm()
            outcome = await self._nlu.replay(req, self._candidate)
            self._buffer.append(result_row(self.id, row, req, outcome))
            self.done += 1
            await asyncio.sleep(0)  # let ready live requests run before the next replay

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._report_interval_s)
            try:
                cancel = await self._report()
            except Exception as exc:  # the database: the results wait for the next write
                log.warning("evaluation %s: cannot write progress (%s)", self.id,
                            type(exc).__name__)
                continue
            if cancel:
                log.info("evaluation %s: cancel asked for on another worker", self.id)
                self.stop("cancelled")

    async def _report(self) -> bool:
        """Write the buffered results with the progress; True if a cancel was asked for."""
        # Every replay counted in `done` has its row in the buffer at this point (both are
        # updated together, with no await between).
        rows, self._buffer, done = self._buffer, [], self.done
        # Shielded: the watcher is cancelled when the run ends, and a write cut off in its
        # commit could not tell whether its rows landed (put back, they were written twice).
        # The write finishes on its own; `_finish` waits for it.
        self._writing = asyncio.create_task(self._write(rows, done))
        return await asyncio.shield(self._writing)

    async def _write(self, rows: list[dict[str, Any]], done: int) -> bool:
        try:
            # Customers' personal data out of the rows, in a thread (as the call log does).
            stored = await asyncio.to_thread(redact_rows, rows, privacy.current())
            async with self._db.session() as s:
                await repository.add_results(s, stored)
                return await repository.report(s, self.id, done=done, now=utcnow())
        except BaseException:
            self._buffer[:0] = rows  # kept for the next write
            raise

    async def _finish(self, status: str, reason: str | None) -> None:
        try:
            async with asyncio.timeout(FINISH_TIMEOUT_S):
                if self._writing is not None:  # a progress write still going: its rows first
                    with contextlib.suppress(Exception):
                        await self._writing
                rows, self._buffer = self._buffer, []
                rows = await asyncio.to_thread(redact_rows, rows, privacy.current())
                async with self._db.session() as s:
                    await repository.add_results(s, rows)
                    results = await repository.result_stats(s, self.id)
                    # In a thread: tens of milliseconds for thousands of calls, which would
                    # otherwise hold up every live call waiting on this event loop.
                    summary = await asyncio.to_thread(summarize, results, skipped=self._skipped)
                    await repository.finish(s, self.id, status=status, reason=reason,
                                            done=self.done, summary=summary, now=utcnow())
        except Exception as exc:
            # The sweep marks it failed once its heartbeat is stale: never left running.
            log.error("evaluation %s: could not write its end (%s)", self.id, type(exc).__name__)


def result_row(evaluation_id: int, row: Any, req: DecideRequest,
               outcome: Outcome) -> dict[str, Any]:
    recorded = row.decision
    decision = outcome.decision
    named = recorded.get("global_intent")  # kept since 0016 when the model named one
    recorded_global = named if isinstance(named, str) else None
    candidate_global = (decision.global_intent.name
                        if decision is not None and decision.global_intent is not None else None)
    agreement = compare(
        intents_offered=bool(req.intents), slots_asked=bool(req.slots),
        recorded_intent=recorded.get("intent"), recorded_slots=recorded.get("slots"),
        candidate_intent=decision.intent if decision else None,
        candidate_slots=decision.slots if decision else None,
        candidate_decided=decision is not None,
        candidate_fallback=bool(decision and decision.fallback),
        recorded_fallback=bool(recorded.get("fallback")),
        recorded_global=recorded_global, candidate_global=candidate_global)
    tokens = outcome.tokens
    return {
        "evaluation_id": evaluation_id, "input_id": row.id, "at": row.at,
        "call_id": row.call_id, "node_id": row.node_id, "utterance": req.utterance,
        "recorded_intent": recorded.get("intent"), "recorded_slots": recorded.get("slots"),
        "recorded_fallback": bool(recorded.get("fallback")),
        "recorded_code": str(recorded.get("code") or "ok")[:40],
        "recorded_latency_ms": row.latency_ms,
        "candidate_intent": decision.intent if decision else None,
        "recorded_global_intent": recorded_global, "candidate_global_intent": candidate_global,
        "candidate_slots": storable_json(decision.slots) if decision else None,
        "candidate_fallback": bool(decision and decision.fallback),
        "candidate_code": outcome.code, "candidate_latency_ms": float(outcome.latency_ms),
        "prompt_tokens": tokens.prompt_tokens, "completion_tokens": tokens.completion_tokens,
        "reasoning_tokens": tokens.reasoning_tokens,
        "intent_agrees": agreement.intent, "slots_agree": agreement.slots,
        "agrees": agreement.agrees,
    }
