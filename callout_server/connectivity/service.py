"""`ConnectionTester`: one small real request to every endpoint of a stored configuration
(active or not), all at once: the base URL and each replica of its pool."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping

from callout_server.config.schemas import ConnectionTestResult, EndpointTestResult
from callout_server.config.service import ConfigService
from callout_server.llm import (
    Completion,
    LLMCallError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    effective_thinking,
)
from callout_server.llm.masking import mask_url

TEST_PROMPT = "ping"


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
        # Room for a reasoning preamble when thinking may run, else a token-sized answer.
        thinking = effective_thinking(cfg, request)
        request = dataclasses.replace(
            request, max_tokens=16 if thinking is False else min(cfg.max_tokens, 512))
        targets = [cfg, *(dataclasses.replace(cfg, base_url=ep.base_url, endpoints=())
                          for ep in cfg.endpoints)]
        outcomes = await asyncio.gather(*(self._one(t, request) for t in targets))
        endpoints = [self._endpoint_result(t, o) for t, o in zip(targets, outcomes, strict=True)]
        first, first_result = outcomes[0], endpoints[0]
        if isinstance(first, Completion):
            suppressed = None if first.thinking is None else first.thinking is False
            model = first.model or cfg.model
        else:
            suppressed, model = None, cfg.model
        return ConnectionTestResult(
            ok=all(e.ok for e in endpoints), latency_ms=first_result.latency_ms, model=model,
            thinking_suppressed=suppressed, diagnostic=first_result.diagnostic,
            endpoints=endpoints)

    async def _one(self, cfg: LLMConfig, request: LLMRequest
                   ) -> Completion | tuple[LLMCallError, float]:
        started = time.monotonic()
        try:
            return await self._llm.complete(cfg, request)
        except LLMCallError as exc:
            return exc, (time.monotonic() - started) * 1000

    @staticmethod
    def _endpoint_result(cfg: LLMConfig, outcome: Completion | tuple[LLMCallError, float]
                         ) -> EndpointTestResult:
        url = mask_url(cfg.base_url)
        if isinstance(outcome, Completion):
            diagnostic = outcome.diagnostic.to_dict() if outcome.diagnostic else None
            return EndpointTestResult(base_url=url, ok=True, latency_ms=int(outcome.latency_ms),
                                      diagnostic=diagnostic)
        error, elapsed_ms = outcome
        return EndpointTestResult(base_url=url, ok=False, latency_ms=int(elapsed_ms),
                                  diagnostic=error.diagnostic.to_dict())
