"""NLU decisions: prompt, one model call over the upstream pool, extraction, validation.

The hot path: configuration from the in-memory snapshot (a callable, no I/O), the pool
(`callout_server.upstream`: replicas, failover, hedging, all in memory) on the shared client's
pooled connections, JSON extraction and validation in memory, and the call log handed to the
background recorder: one record per decision, naming the endpoint and configuration that
answered and the requests it took. `deadline_ms` bounds everything, failover included.
Invalid output is the model's answer, not an endpoint's failure: it is not retried.

A decision's inputs ride on its record to the call log (kept `[calllog] nlu_inputs_days` for
shadow evaluation); `replay()` sends such recorded inputs to another configuration through
the very same path, recorded as `source: "evaluation"`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.recorder import DiagnosticsRecorder
from callout_server.calllog.records import record_call
from callout_server.i18n import current
from callout_server.llm.client import Completion, LLMClient
from callout_server.llm.config import LLMConfig
from callout_server.llm.diagnostics import Diagnostic, Locale
from callout_server.llm.errors import LLMCallError
from callout_server.llm.json_extract import JSONExtractionError, extract_json_object
from callout_server.llm.request import LLMRequest
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.errors import ModelCallFailed
from callout_server.tiers.nlu import metrics
from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest, Decision
from callout_server.tiers.nlu.validate import SchemaMismatch, validate_answer
from callout_server.upstream import Call, Route, Served, Upstreams


def llm_request(req: DecideRequest) -> LLMRequest:
    """The model call for one decision: JSON mode, the node's overrides, thinking off."""
    return req.overrides.apply(build_messages(req), json_mode=True,
                               default_thinking=THINKING_DEFAULT["nlu"])


class NluService:
    def __init__(self, llm: Upstreams | LLMClient,
                 active_config: Callable[[], LLMConfig | Route],
                 recorder: DiagnosticsRecorder | None = None, locale: Locale = "zh") -> None:
        self._upstreams = llm if isinstance(llm, Upstreams) else Upstreams(llm)
        self._active_config = active_config
        self._recorder = recorder
        self._locale = locale

    async def decide(self, req: DecideRequest) -> Decision:
        outcome = await self._decide(req, Route.of(self._active_config()), "live")
        metrics.counted(outcome.decision.fallback if outcome.decision else None)
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
        return await self._decide(req, Route.of(cfg), "evaluation")

    async def _decide(self, req: DecideRequest, route: Route, source: str) -> Outcome:
        cfg = route.primary
        started = time.perf_counter()
        deadline_s = (req.deadline_ms / 1000) if req.deadline_ms else cfg.timeout_s
        llm_req = llm_request(req)
        keep = source == "live" and self._recorder is not None and self._recorder.keeps_nlu_inputs
        call = self._upstreams.call(route, deadline_s=deadline_s)
        served: Served[Completion] | None = None
        tokens = _Tokens()
        try:
            async with asyncio.timeout(deadline_s):
                served = await call.complete(llm_req)
            tokens.add(served.value.usage)
            intent, confidence, slots = self._read(req, served.value)
        except TimeoutError:
            failure = Diagnostic.make(
                "deadline_exceeded", self._locale, reason="deadline",
                args={"deadline_ms": round(deadline_s * 1000)},
                max_tokens=llm_req.max_tokens or cfg.max_tokens)
        except LLMCallError as exc:  # UpstreamError: every attempt failed
            failure = exc.diagnostic
        except _Failure as exc:
            failure = exc.diagnostic
        else:
            latency_ms = _ms_since(started)
            decision = Decision(intent=intent, confidence=confidence, slots=slots, fallback=False,
                                model=served.value.model or served.config.model,
                                latency_ms=latency_ms, diagnostic=None)
            inputs = _inputs(req, decision, "ok") if keep else None
            self._record(req, call.attempts, started, served, source=source, inputs=inputs)
            return Outcome(decision, None, latency_ms, tokens)
        if served is None:
            tokens.add(failure)
        latency_ms = _ms_since(started)
        answered = served.config if served is not None else call.where()[0]
        decision = None if req.fallback_intent is None else Decision(
            intent=req.fallback_intent, confidence=None, slots={s.name: None for s in req.slots},
            fallback=True, model=answered.model, latency_ms=latency_ms, diagnostic=None)
        inputs = _inputs(req, decision, failure.code) if keep and decision is not None else None
        diagnostic = self._record(req, call.attempts, started, served, failure, call=call,
                                  source=source, inputs=inputs)
        assert diagnostic is not None
        if decision is not None:
            decision.diagnostic = diagnostic.to_dict(current(self._locale))
        return Outcome(decision, diagnostic, latency_ms, tokens)

    def _read(self, req: DecideRequest, completion: Completion) -> tuple[str | None, float | None, dict[str, Any]]:
        try:
            answer = extract_json_object(completion.text, finish_reason=completion.finish_reason)
        except JSONExtractionError as exc:
            if exc.reason == "truncated" and completion.finish_reason == "length":
                raise _Failure(completion.diagnostic or Diagnostic.make(
                    "truncated", self._locale, max_tokens=completion.max_tokens,
                    finish_reason="length")) from exc
            raise _Failure(Diagnostic.make(
                "invalid_json", self._locale, reason=f"json_{exc.reason}",
                finish_reason=completion.finish_reason, max_tokens=completion.max_tokens,
                completion_tokens=completion.usage.completion_tokens)) from exc
        try:
            return validate_answer(req, answer)
        except SchemaMismatch as exc:
            raise _Failure(Diagnostic.make("schema_mismatch", self._locale, reason=exc.reason,
                                           args=exc.values,
                                           finish_reason=completion.finish_reason)) from exc

    def _record(self, req: DecideRequest, attempts: int, started: float,
                served: Served[Completion] | None, diagnostic: Diagnostic | None = None,
                *, call: Call | None = None, source: str = "live",
                inputs: NluInputs | None = None) -> Diagnostic | None:
        """Hand the decision to the call log (one record per call, whatever it took);
        returns the diagnostic carrying its record id."""
        if served is not None:
            cfg, endpoint, completion = served.config, served.endpoint, served.value
        else:
            assert call is not None
            (cfg, endpoint), completion = call.where(), None
        return record_call(
            self._recorder, "nlu", cfg, diagnostic, started=started, call_id=req.call_id,
            node_id=req.node_id, usage=completion.usage if completion else None,
            vendor=completion.dialect if completion else None,
            max_tokens=completion.max_tokens if completion else None,
            finish_reason=completion.finish_reason if completion else None,
            endpoint=endpoint, attempts=attempts, source=source, inputs=inputs)


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


@dataclass(slots=True, frozen=True)
class Outcome:
    """A decision and what it cost: `decision` None when it failed with no fallback intent
    (`diagnostic` says why; live traffic gets a 502/504)."""

    decision: Decision | None
    diagnostic: Diagnostic | None  # the last attempt's, when it failed
    latency_ms: int
    tokens: _Tokens

    @property
    def code(self) -> str:
        return "ok" if self.diagnostic is None else self.diagnostic.code



def _inputs(req: DecideRequest, decision: Decision, code: str) -> NluInputs:
    """The decision's inputs for the call log: the request is only referenced here (the
    background writer serialises it), so the hot path pays for one small dict."""
    return NluInputs(req, {"intent": decision.intent, "slots": decision.slots,
                           "fallback": decision.fallback, "code": code,
                           "confidence": decision.confidence}, decision.latency_ms)


class _Failure(Exception):
    """The model answered, but not with a usable decision (the request's fault)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.code)
        self.diagnostic = diagnostic


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
