"""NLU decisions: prompt, one model call (one retry if transient), extraction, validation.

The hot path: configuration from the in-memory snapshot (a callable, no I/O), the shared
client's pooled connection, JSON extraction and validation in memory, and the call log
handed to the background recorder. `deadline_ms` bounds everything, the retry included.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

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
from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest, Decision
from callout_server.tiers.nlu.validate import SchemaMismatch, validate_answer

# Below this much time left, a retry could not finish: answer now instead.
MIN_RETRY_BUDGET_S = 0.05
def llm_request(req: DecideRequest) -> LLMRequest:
    """The model call for one decision: JSON mode, the node's overrides, thinking off."""
    return req.overrides.apply(build_messages(req), json_mode=True,
                               default_thinking=THINKING_DEFAULT["nlu"])


class NluService:
    def __init__(self, llm: LLMClient, active_config: Callable[[], LLMConfig],
                 recorder: DiagnosticsRecorder | None = None, locale: Locale = "zh") -> None:
        self._llm = llm
        self._active_config = active_config
        self._recorder = recorder
        self._locale = locale

    async def decide(self, req: DecideRequest) -> Decision:
        cfg = self._active_config()
        started = time.perf_counter()
        deadline_s = (req.deadline_ms / 1000) if req.deadline_ms else cfg.timeout_s
        llm_req = llm_request(req)
        diagnostic: Diagnostic | None = None
        for attempt in range(2):
            remaining = deadline_s - (time.perf_counter() - started)
            if attempt and remaining < MIN_RETRY_BUDGET_S:
                break
            attempt_started = time.perf_counter()
            completion: Completion | None = None
            try:
                async with asyncio.timeout(remaining):
                    completion = await self._llm.complete(cfg, llm_req)
                intent, confidence, slots = self._read(req, completion)
            except TimeoutError:
                failure = _Failure(Diagnostic.make(
                    "deadline_exceeded", self._locale, reason="deadline",
                    args={"deadline_ms": round(deadline_s * 1000)},
                    max_tokens=llm_req.max_tokens or cfg.max_tokens), retryable=False)
            except LLMCallError as exc:
                failure = _Failure(exc.diagnostic, retryable=exc.retryable)
            except _Failure as exc:
                failure = exc
            else:
                self._record(req, cfg, None, attempt_started, completion)
                return Decision(intent=intent, confidence=confidence, slots=slots, fallback=False,
                                model=completion.model or cfg.model,
                                latency_ms=_ms_since(started), diagnostic=None)
            diagnostic = self._record(req, cfg, failure.diagnostic, attempt_started, completion)
            if not failure.retryable:
                break
        assert diagnostic is not None
        if req.fallback_intent is None:
            raise ModelCallFailed(diagnostic)
        return Decision(intent=req.fallback_intent, confidence=None,
                        slots={s.name: None for s in req.slots}, fallback=True, model=cfg.model,
                        latency_ms=_ms_since(started),
                        diagnostic=diagnostic.to_dict(current(self._locale)))

    def _read(self, req: DecideRequest, completion: Completion) -> tuple[str | None, float | None, dict[str, Any]]:
        try:
            answer = extract_json_object(completion.text, finish_reason=completion.finish_reason)
        except JSONExtractionError as exc:
            if exc.reason == "truncated" and completion.finish_reason == "length":
                raise _Failure(completion.diagnostic or Diagnostic.make(
                    "truncated", self._locale, max_tokens=completion.max_tokens,
                    finish_reason="length"), retryable=False) from exc
            raise _Failure(Diagnostic.make(
                "invalid_json", self._locale, reason=f"json_{exc.reason}",
                finish_reason=completion.finish_reason, max_tokens=completion.max_tokens,
                completion_tokens=completion.usage.completion_tokens), retryable=True) from exc
        try:
            return validate_answer(req, answer)
        except SchemaMismatch as exc:
            raise _Failure(Diagnostic.make("schema_mismatch", self._locale, reason=exc.reason,
                                           args=exc.values, finish_reason=completion.finish_reason),
                           retryable=False) from exc

    def _record(self, req: DecideRequest, cfg: LLMConfig, diagnostic: Diagnostic | None,
                started: float, completion: Completion | None) -> Diagnostic | None:
        """Hand the attempt to the call log; returns the diagnostic carrying its record id."""
        return record_call(
            self._recorder, "nlu", cfg, diagnostic, started=started, call_id=req.call_id,
            node_id=req.node_id, usage=completion.usage if completion else None,
            vendor=completion.dialect if completion else None,
            max_tokens=completion.max_tokens if completion else None,
            finish_reason=completion.finish_reason if completion else None)


class _Failure(Exception):
    def __init__(self, diagnostic: Diagnostic, *, retryable: bool) -> None:
        super().__init__(diagnostic.code)
        self.diagnostic = diagnostic
        self.retryable = retryable


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
