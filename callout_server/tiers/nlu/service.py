"""NLU decisions: prompt, one model call over the upstream pool, extraction, validation.

The hot path: configuration from the in-memory snapshot (a callable, no I/O), the pool
(`callout_server.upstream`: replicas, failover, hedging, all in memory) on the shared client's
pooled connections, JSON extraction and validation in memory, and the call's report handed
to the call log's background recorder: one record per decision, naming the endpoint and
configuration that answered and the requests it took. `deadline_ms` bounds the model call,
failover included (the pool holds it: `upstream/deadline.py`). Invalid output is the model's
answer, not an endpoint's failure: it is not retried.

A decision's inputs ride on its record to the call log (kept `[calllog] nlu_inputs_days` for
shadow evaluation); `replay()` sends such recorded inputs to another configuration through
the very same path, recorded as `source: "evaluation"`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.reports import NULL_RECORDER, Recorder, record_call, record_rule
from callout_server.i18n import current
from callout_server.intents.compiled import CompiledIntents
from callout_server.llm import (
    Completion,
    Diagnostic,
    JSONExtractionError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    Locale,
    extract_json_object,
)
from callout_server.phrases import GlobalIntent, IntentHit
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.errors import ModelCallFailed
from callout_server.tiers.nlu import metrics
from callout_server.tiers.nlu.global_intents import (
    answer_of,
    in_play,
    offered_to_model,
    read_global,
    rule_hit,
)
from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest, Decision, GlobalIntentAnswer
from callout_server.tiers.nlu.validate import SchemaMismatch, validate_answer
from callout_server.upstream import Call, CallReport, Route, UpstreamError, Upstreams


def llm_request(req: DecideRequest, global_intents: tuple[GlobalIntent, ...] = ()) -> LLMRequest:
    """The model call for one decision: JSON mode, the node's overrides, thinking off."""
    return req.overrides.apply(build_messages(req, global_intents), json_mode=True,
                               default_thinking=THINKING_DEFAULT["nlu"])


def _no_global_intents() -> CompiledIntents | None:
    return None


class NluService:
    def __init__(self, llm: Upstreams | LLMClient,
                 active_config: Callable[[], LLMConfig | Route],
                 recorder: Recorder = NULL_RECORDER, locale: Locale = "zh",
                 global_intents: Callable[[], CompiledIntents | None] = _no_global_intents,
                 *, split: Callable[[Route, str | None], Route] | None = None) -> None:
        self._upstreams = llm if isinstance(llm, Upstreams) else Upstreams(llm)
        self._active_config = active_config
        # A running canary's split (canary/split.py): the route for this call's call_id.
        self._split = split
        self._recorder = recorder
        self._locale = locale
        self._global_intents = global_intents  # the snapshot's section: memory only

    async def decide(self, req: DecideRequest, *, received_at: float | None = None,
                     route: Route | None = None, source: str = "live") -> Decision:
        """`received_at`: `time.perf_counter()` when the request arrived; `deadline_ms` counts
        from there (a request that waited past it gets no model call). The console's
        playground names its own `route` (any configuration of the tier) and `source`
        ("playground": no live traffic, its inputs never kept, so never replayed); live
        traffic meets a running canary's split (by call_id).

        The global intents first (tiers/nlu/global_intents.py): a phrase rule that hits
        answers at once, without a model call."""
        live = source == "live"
        intents = in_play(req, self._global_intents())
        hit = rule_hit(req, intents)
        if hit is not None:
            assert intents is not None
            return self._rule_decision(req, intents, hit, received_at, live=live)
        if route is None:
            route = Route.of(self._active_config())
            if self._split is not None:
                route = self._split(route, req.call_id)
        outcome = await self._decide(req, route, source, received_at, intents)
        if live:
            metrics.counted(outcome.decision.fallback if outcome.decision else None)
            if outcome.decision is not None and outcome.decision.global_intent is not None:
                metrics.global_intent(outcome.decision.global_intent.name, req.node_id, "model")
        if outcome.decision is None:
            assert outcome.diagnostic is not None
            raise ModelCallFailed(outcome.diagnostic)
        return outcome.decision

    async def replay(self, req: DecideRequest, cfg: LLMConfig) -> Outcome:
        """A recorded decision's inputs sent to `cfg` exactly as live traffic is sent.

        The same prompt, request shaping, pool (the candidate's own endpoints), deadline,
        extraction and validation as `decide()`; the call is recorded with `source:
        "evaluation"` and its inputs are never kept (a replay is no traffic to replay later).
        Cancelling the caller closes the upstream request.
        """
        return await self._decide(req, Route.of(cfg), "evaluation", None,
                                  in_play(req, self._global_intents()))

    def _rule_decision(self, req: DecideRequest, intents: CompiledIntents, hit: IntentHit,
                       received_at: float | None, *, live: bool = True) -> Decision:
        """A global intent's phrase said: answered now, recorded as the rules' decision
        (live traffic only: a playground try-out is neither recorded nor counted)."""
        started = time.perf_counter() if received_at is None else received_at
        latency = (time.perf_counter() - started) * 1000
        if live:
            record_rule(self._recorder, "nlu", f"global_intent.{hit.intent}",
                        call_id=req.call_id, node_id=req.node_id, latency_ms=round(latency, 3),
                        args={"intent": hit.intent, "phrase": hit.phrase})
            metrics.counted(False, rule=True)
            metrics.global_intent(hit.intent, req.node_id, "rule")
        return Decision(intent=None, confidence=None, slots={s.name: None for s in req.slots},
                        fallback=False, model=None, latency_ms=round(latency), diagnostic=None,
                        global_intent=answer_of(hit.intent, intents, "rule"))

    async def _decide(self, req: DecideRequest, route: Route, source: str,
                      received_at: float | None = None,
                      intents: CompiledIntents | None = None) -> Outcome:
        started = time.perf_counter() if received_at is None else received_at
        deadline_s = (req.deadline_ms / 1000) if req.deadline_ms else route.primary.timeout_s
        # The budget is the caller's, from its request's arrival (upstream/deadline.py).
        call = self._upstreams.call(route, deadline_s=deadline_s, started=started)
        llm_req = llm_request(req, offered_to_model(intents))
        decision: Decision | None
        if call.deadline.expired():  # spent before it got here: no call, no endpoint blamed
            report = call.report(self._too_late(call, llm_req))
        else:
            try:
                served = await call.complete(llm_req)
            except UpstreamError as exc:  # every attempt failed, or the deadline passed
                report = exc.report
            else:
                # The verdict is the decision's: a whole decision read from an answer cut
                # after it is a decision (the record says `ok`, with the vendor's finish
                # reason); an answer read after the deadline is none (never given late).
                try:
                    intent, confidence, slots, named = self._read(req, served.value, intents)
                except _Failure as exc:
                    report = served.report.judged(exc.diagnostic)
                else:
                    if call.deadline.expired():
                        report = served.report.judged(self._too_late(call, llm_req))
                    else:
                        report = served.report
                        if report.diagnostic is not None:
                            report = report.judged(None)
                        latency_ms = _ms_since(started)
                        decision = Decision(intent=intent, confidence=confidence, slots=slots,
                                            fallback=False,
                                            model=served.value.model or served.config.model,
                                            latency_ms=latency_ms, diagnostic=None,
                                            global_intent=named)
                        self._record(req, report, source, decision, "ok")
                        return Outcome(decision, None, latency_ms, _Tokens.of(report))
        failure = report.diagnostic
        assert failure is not None
        latency_ms = _ms_since(started)
        decision = None if req.fallback_intent is None else Decision(
            # A slots-only node offered no intent: its fallback answers none either.
            intent=req.fallback_intent if req.intents else None, confidence=None,
            slots={s.name: None for s in req.slots}, fallback=True, model=report.config.model,
            latency_ms=latency_ms, diagnostic=None)
        diagnostic = self._record(req, report, source, decision, failure.code)
        assert diagnostic is not None
        if decision is not None:
            decision.diagnostic = diagnostic.to_dict(current(self._locale))
        return Outcome(decision, diagnostic, latency_ms, _Tokens.of(report))

    def _too_late(self, call: Call, llm_req: LLMRequest) -> Diagnostic:
        return call.deadline.exceeded(self._locale,
                                      llm_req.max_tokens or call.route.primary.max_tokens)

    def _read(self, req: DecideRequest, completion: Completion,
              intents: CompiledIntents | None = None,
              ) -> tuple[str | None, float | None, dict[str, Any], GlobalIntentAnswer | None]:
        """The decision in the model's answer (and the global intent it named), or
        `_Failure` saying why there is none.

        Whether the output was cut is the client's verdict (`completion.diagnostic`, judged
        once by classify.py): no complete object in a cut output is that verdict; anything
        else that cannot be read is `invalid_json` with the extractor's reason."""
        try:
            answer = extract_json_object(completion.text)
        except JSONExtractionError as exc:
            if completion.diagnostic is not None:  # cut (`truncated`): the budget, not JSON
                raise _Failure(completion.diagnostic) from exc
            raise _Failure(Diagnostic.make(
                "invalid_json", self._locale, reason=f"json_{exc.reason}",
                finish_reason=completion.finish_reason, max_tokens=completion.max_tokens,
                completion_tokens=completion.usage.completion_tokens)) from exc
        named, as_intent = read_global(answer, req, intents)
        try:
            # A global intent named as `intent` is no node intent: none is taken then.
            return (*validate_answer(req.model_copy(update={"intents": []}) if as_intent
                                     else req, answer), named)
        except SchemaMismatch as exc:
            raise _Failure(Diagnostic.make("schema_mismatch", self._locale, reason=exc.reason,
                                           args=exc.values,
                                           finish_reason=completion.finish_reason)) from exc

    def _record(self, req: DecideRequest, report: CallReport, source: str,
                decision: Decision | None, code: str) -> Diagnostic | None:
        """Hand the decision's call to the call log (one record per decision, whatever it
        took), with its inputs when they are kept; returns the diagnostic with its record id."""
        inputs = None
        if decision is not None and source == "live" and self._recorder.keeps_nlu_inputs:
            inputs = _inputs(req, decision, code)
        return record_call(self._recorder, report, "nlu", call_id=req.call_id,
                           node_id=req.node_id, source=source, inputs=inputs)


class _Tokens:
    """Tokens a decision's attempts spent, summed (None until one reports a count)."""

    __slots__ = ("completion_tokens", "prompt_tokens", "reasoning_tokens")

    def __init__(self) -> None:
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.reasoning_tokens: int | None = None

    def add(self, counts: object) -> None:
        """Counts from a `Usage` or a `Diagnostic` (same attribute names)."""
        for key in self.__slots__:
            value = getattr(counts, key, None)
            if isinstance(value, int):
                setattr(self, key, (getattr(self, key) or 0) + value)

    @classmethod
    def of(cls, report: CallReport) -> _Tokens:
        """What the vendor reported, else the counts the diagnostic carries."""
        tokens = cls()
        tokens.add(report.usage if report.usage is not None else report.diagnostic)
        return tokens


@dataclass(slots=True, frozen=True)
class Outcome:
    """A decision and what it cost: `decision` None when it failed with no fallback intent
    (`diagnostic` says why; live traffic gets a 502/504)."""

    decision: Decision | None
    diagnostic: Diagnostic | None  # why it failed (with its record id)
    latency_ms: int
    tokens: _Tokens

    @property
    def code(self) -> str:
        return "ok" if self.diagnostic is None else self.diagnostic.code



def _inputs(req: DecideRequest, decision: Decision, code: str) -> NluInputs:
    """The decision's inputs for the call log: the request is only referenced here (the
    background writer serialises it), so the hot path pays for one small dict. A global
    intent the model named is kept with it (`global_intent`: its name), so a shadow
    evaluation compares it too."""
    kept = {"intent": decision.intent, "slots": decision.slots, "fallback": decision.fallback,
            "code": code, "confidence": decision.confidence}
    if decision.global_intent is not None:
        kept["global_intent"] = decision.global_intent.name
    return NluInputs(req, kept, decision.latency_ms)


class _Failure(Exception):
    """The model answered, but not with a usable decision (the request's fault)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.code)
        self.diagnostic = diagnostic


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
