"""`ConnectionTester`: one small real request with a stored configuration (active or not)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

from callout_server.config.schemas import ConnectionCheck, ConnectionTestResult
from callout_server.config.service import ConfigService
from callout_server.connectivity.checks import Probe, judge
from callout_server.i18n import current
from callout_server.llm import (
    Completion,
    Diagnostic,
    LLMCallError,
    LLMClient,
    LLMRequest,
    effective_thinking,
)

TEST_PROMPT = "ping"
# The test's own output cap: a few tokens prove an answer when thinking is off; with
# thinking on, room for a reasoning preamble. Never more than the operator's max_tokens.
ANSWER_CAP = 16
THINKING_CAP = 512


class ConnectionTester:
    def __init__(self, llm: LLMClient, configs: ConfigService,
                 thinking_defaults: Mapping[str, bool | None]) -> None:
        self._llm = llm
        self._configs = configs
        # The tiers' own defaults (tiers/defaults.py): the test sends what the tier would.
        self._thinking_defaults = thinking_defaults

    async def test(self, config_id: int) -> ConnectionTestResult:
        cfg = await self._configs.resolve(config_id)
        request = LLMRequest(messages=[{"role": "user", "content": TEST_PROMPT}],
                             default_thinking=self._thinking_defaults.get(cfg.tier))
        thinking = effective_thinking(cfg, request)
        cap = min(cfg.max_tokens, ANSWER_CAP if thinking is False else THINKING_CAP)
        request = dataclasses.replace(request, max_tokens=cap)
        shape = Probe(model=cfg.model, has_key=bool(cfg.api_key), max_tokens=cfg.max_tokens,
                          test_max_tokens=cap, thinking=thinking)
        started = time.monotonic()
        outcome: Completion | Diagnostic
        try:
            outcome = await self._llm.complete(cfg, request)
            latency_ms = int(outcome.latency_ms)
            model = outcome.model or cfg.model
        except LLMCallError as exc:
            outcome = exc.diagnostic
            latency_ms = int((time.monotonic() - started) * 1000)
            model = cfg.model
        verdict = judge(outcome, shape)
        return ConnectionTestResult(
            ok=verdict.ok, latency_ms=latency_ms, model=model,
            thinking_suppressed=verdict.thinking_suppressed,
            diagnostic=verdict.diagnostic.to_dict(current()) if verdict.diagnostic else None,
            checks=[ConnectionCheck(**c.to_dict()) for c in verdict.checks],
            test_max_tokens=cap)
