"""`ConnectionTester`: one small real request to every endpoint of a configuration, all at
once: the base URL and each replica of its pool.

    await tester.test(config_id)        # a stored configuration (active or not)
    await tester.test_draft(draft)      # the form's values before they are saved

A draft may lean on a stored configuration's key (`config_id`, no `api_key`): only while
every URL it names has the origin that key was saved for (`resolve_key`), the rule saving
follows; a key never reaches a host it was not given for.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from callout_server.config.errors import ApiKeyRequired
from callout_server.config.schemas import (
    CALL_FIELDS,
    ConnectionCheck,
    ConnectionDraft,
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
    same_origin,
)

TEST_PROMPT = "ping"
# The test's own output cap: a few tokens prove an answer when thinking is off; with
# thinking on, room for a reasoning preamble. Never more than the operator's max_tokens.
ANSWER_CAP = 16
THINKING_CAP = 512
DRAFT_TIMEOUT_S = 15.0


async def resolve_key(configs: ConfigService, config_id: int | None, api_key: str | None,
                      urls: list[str]) -> str:
    """The key a form's request is sent with: the one typed (`""`: none); else, editing a
    stored configuration, its stored key when every URL keeps that key's origin (base URL
    or a replica's); else none for a new one. A moved host without a key typed is a 422
    `api_key_required`, as saving would be."""
    if api_key is not None:
        return api_key
    if config_id is None:
        return ""
    stored = await configs.resolve(config_id)
    if not stored.api_key:
        return ""
    known = [stored.base_url, *(e.base_url for e in stored.endpoints)]
    if all(any(same_origin(u, k) for k in known) for u in urls):
        return stored.api_key
    raise ApiKeyRequired()


class ConnectionTester:
    def __init__(self, llm: LLMClient, configs: ConfigService,
                 thinking_defaults: Mapping[str, bool | None]) -> None:
        self._llm = llm
        self._configs = configs
        # The tiers' own defaults (tiers/defaults.py): the test sends what the tier would.
        self._thinking_defaults = thinking_defaults

    async def test(self, config_id: int) -> ConnectionTestResult:
        return await self._run(await self._configs.resolve(config_id))

    async def test_draft(self, draft: ConnectionDraft) -> ConnectionTestResult:
        key = await resolve_key(self._configs, draft.config_id, draft.api_key,
                                [draft.base_url, *(e.base_url for e in draft.endpoints)])
        values = draft.model_dump(include=set(CALL_FIELDS))
        cfg = LLMConfig(tier=draft.tier, api_key=key, id=None, source="db", **values)
        # An unsaved form may name any host: the test is bounded however long its timeout.
        return await self._run(dataclasses.replace(cfg, timeout_s=min(cfg.timeout_s,
                                                                      DRAFT_TIMEOUT_S)))

    async def _run(self, cfg: LLMConfig) -> ConnectionTestResult:
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
