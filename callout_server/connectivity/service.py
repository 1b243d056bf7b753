"""`ConnectionTester`: one small real request to every endpoint of a stored configuration
(active or not), all at once: the base URL and each replica of its pool."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from callout_server.config.schemas import (
    ConnectionCheck,
    ConnectionTestResult,
    EndpointTestResult,
)
from callout_server.config.service import ConfigService
from callout_server.connectivity.checks import Probe, Verdict, judge
from callout_server.i18n import Locale, current
from callout_server.llm import (
    Completion,
    Diagnostic,
    LLMCallError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    effective_thinking,
    mask_url,
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
        # Every endpoint of the pool at once: a dead replica is what the operator must see.
        targets = [cfg, *(dataclasses.replace(cfg, base_url=ep.base_url, endpoints=())
                          for ep in cfg.endpoints)]
        tried = await asyncio.gather(*(self._one(t, request) for t in targets))
        verdicts = [(judge(outcome, shape), latency_ms, model)
                    for outcome, latency_ms, model in tried]
        locale = current()
        endpoints = [EndpointTestResult(base_url=mask_url(t.base_url), ok=v.ok,
                                        latency_ms=latency_ms, diagnostic=_diagnostic(v, locale))
                     for t, (v, latency_ms, _) in zip(targets, verdicts, strict=True)]
        verdict, latency_ms, model = verdicts[0]
        return ConnectionTestResult(
            ok=all(e.ok for e in endpoints), latency_ms=latency_ms, model=model,
            thinking_suppressed=verdict.thinking_suppressed,
            diagnostic=_diagnostic(verdict, locale),
            checks=[ConnectionCheck(**c.to_dict()) for c in verdict.checks],
            test_max_tokens=cap, endpoints=endpoints)

    async def _one(self, cfg: LLMConfig, request: LLMRequest
                   ) -> tuple[Completion | Diagnostic, int, str]:
        """One endpoint's answer or failure, its latency in ms and the model that answered."""
        started = time.monotonic()
        try:
            outcome = await self._llm.complete(cfg, request)
            return outcome, int(outcome.latency_ms), outcome.model or cfg.model
        except LLMCallError as exc:
            return exc.diagnostic, int((time.monotonic() - started) * 1000), cfg.model


def _diagnostic(verdict: Verdict, locale: Locale) -> dict[str, Any] | None:
    return verdict.diagnostic.to_dict(locale) if verdict.diagnostic else None
