"""`ConnectionTester`: one small real request with a stored configuration (active or not)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

from callout_server.config.schemas import ConnectionTestResult
from callout_server.config.service import ConfigService
from callout_server.i18n import current
from callout_server.llm import LLMCallError, LLMClient, LLMRequest, effective_thinking

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
        started = time.monotonic()
        try:
            completion = await self._llm.complete(cfg, request)
        except LLMCallError as exc:
            return ConnectionTestResult(
                ok=False, latency_ms=int((time.monotonic() - started) * 1000), model=cfg.model,
                thinking_suppressed=None, diagnostic=exc.diagnostic.to_dict(current()))
        suppressed = None if completion.thinking is None else completion.thinking is False
        diagnostic = completion.diagnostic.to_dict(current()) if completion.diagnostic else None
        return ConnectionTestResult(ok=True, latency_ms=int(completion.latency_ms),
                                    model=completion.model or cfg.model,
                                    thinking_suppressed=suppressed, diagnostic=diagnostic)
