"""Script generation, streamed or not, with the same diagnostics as every tier.

Reasoning (when the vendor returns it) is collected apart and stored beside the draft,
never mixed into the script. A script cut off at max_tokens is reported as such
(`complete: false`, diagnostic `truncated`), never handed over as if complete.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from callout_server.audit.trail import Actor
from callout_server.calllog.reports import NULL_RECORDER, Recorder, record_call
from callout_server.i18n import current, text
from callout_server.llm import (
    Diagnostic,
    Finish,
    LLMCallError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    Locale,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from callout_server.streams import StreamEvent
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.errors import TIMEOUT_CODES, ModelCallFailed
from callout_server.tiers.script.drafts import DraftStore
from callout_server.tiers.script.prompt import build_messages
from callout_server.tiers.script.schemas import GenerateRequest, GenerateResult
from callout_server.upstream import CallReport, Route, UpstreamError, Upstreams

log = logging.getLogger(__name__)


def llm_request(req: GenerateRequest) -> LLMRequest:
    """The model call for one script: the brief's overrides, thinking left to the vendor."""
    return req.overrides.apply(build_messages(req.brief),
                               default_thinking=THINKING_DEFAULT["script"])


def _title(req: GenerateRequest) -> str:
    return req.title or req.brief.strip().splitlines()[0][:60]


class ScriptService:
    def __init__(self, llm: Upstreams | LLMClient, active_config: Callable[[], LLMConfig | Route],
                 drafts: DraftStore, recorder: Recorder = NULL_RECORDER,
                 locale: Locale = "zh") -> None:
        self._upstreams = llm if isinstance(llm, Upstreams) else Upstreams(llm)
        self._active_config = active_config
        self.drafts = drafts
        self._recorder = recorder
        self._locale = locale

    async def generate(self, req: GenerateRequest, actor: Actor, *, route: Route | None = None,
                       source: str = "live") -> GenerateResult:
        """`route` and `source`: the console's playground (any configuration of the tier)."""
        route = route or Route.of(self._active_config())
        try:
            served = await self._upstreams.complete(route, llm_request(req))
        except UpstreamError as exc:
            raise ModelCallFailed(self._record(exc.report, source) or exc.diagnostic) from exc
        cfg, done = served.config, served.value
        diagnostic = self._record(served.report, source)
        draft_id, draft_error = None, None
        try:
            draft_id = await self._save(req, actor, cfg, done.text, done.reasoning,
                                        complete=diagnostic is None, usage=done.usage.to_dict(),
                                        model=done.model or cfg.model)
        except Exception:  # a minute of generation is not thrown away over a failed save
            log.exception("script draft could not be saved")
            draft_error = text("draft_not_saved", current(self._locale))
        return GenerateResult(script=done.text, complete=diagnostic is None,
                              model=done.model or cfg.model, usage=done.usage.to_dict(),
                              diagnostic=diagnostic.to_dict(current(self._locale))
                              if diagnostic else None,
                              draft_id=draft_id, draft_error=draft_error)

    async def stream(self, req: GenerateRequest, actor: Actor, *, route: Route | None = None,
                     source: str = "live") -> AsyncIterator[StreamEvent]:
        """Events: `text_delta`… then `usage` and exactly one `end`, whatever happens.

        A client disconnect cancels this generator; leaving the `async with` closes the
        upstream request, so the vendor stops generating. A draft that cannot be stored
        (the database down) is said in `end` (`draft_error`), after the script it keeps.
        """
        route = route or Route.of(self._active_config())
        pieces: list[str] = []
        reasoning: list[str] = []
        usage: dict[str, int | None] = Usage().to_dict()
        finish: Finish | None = None
        end: dict[str, Any] = {"reason": "completed", "error": None, "diagnostic": None,
                               "draft_id": None}
        # Fails over to another endpoint or a fallback only before the first event.
        upstream = self._upstreams.stream(route, llm_request(req))
        locale = current(self._locale)  # the caller's, read before the stream is iterated
        try:
            async with upstream as st:
                async for event in st:
                    if isinstance(event, TextDelta):
                        pieces.append(event.text)
                        yield StreamEvent("text_delta", {"text": event.text})
                    elif isinstance(event, ReasoningDelta):
                        reasoning.append(event.text)
                    elif isinstance(event, Usage):
                        usage = event.to_dict()
                    elif isinstance(event, Finish):
                        finish = event
        except LLMCallError as exc:
            d = self._record(upstream.report(exc.diagnostic), source) or exc.diagnostic
            end |= {"reason": "timeout" if d.code in TIMEOUT_CODES else "error",
                    "error": {"code": d.code, "message": d.message_in(locale)},
                    "diagnostic": d.to_dict(locale)}
        except Exception as exc:
            # A bug of ours (the model's failures are LLMCallError, above): the stream still
            # ends with its `end`, the cause in the log, its type only in the record.
            log.exception("script generation failed")
            self._record(upstream.report(Diagnostic.make(
                "internal_error", self._locale, detail=type(exc).__name__)), source)
            end |= {"reason": "error", "error": {
                "code": "internal_error", "message": text("script_internal_error", locale)}}
        except BaseException:
            # A disconnect (cancellation): recorded, then let through; a client gone cannot
            # receive an `end` anyway.
            self._record(upstream.report(Diagnostic.make("cancelled", self._locale)), source)
            raise
        else:
            cfg = upstream.config
            diagnostic = self._record(upstream.report(finish.diagnostic if finish else None),
                                      source)
            script = "".join(pieces)
            if diagnostic is not None:
                end |= {"reason": "truncated" if script else "error",
                        "error": {"code": diagnostic.code,
                                  "message": diagnostic.message_in(locale)},
                        "diagnostic": diagnostic.to_dict(locale)}
            if script:
                try:
                    end["draft_id"] = await self._save(
                        req, actor, cfg, script, "".join(reasoning),
                        complete=diagnostic is None, usage=usage, model=cfg.model)
                except Exception:  # the script was streamed; a failed save must not lose `end`
                    log.exception("script draft could not be saved")
                    end["draft_error"] = text("draft_not_saved", locale)
        yield StreamEvent("usage", usage)
        yield StreamEvent("end", end)

    async def _save(self, req: GenerateRequest, actor: Actor, cfg: LLMConfig, script: str,
                    reasoning: str, *, complete: bool, usage: dict[str, int | None],
                    model: str) -> int | None:
        if not req.save or not script:
            return None
        return await self.drafts.create(
            actor, title=_title(req), brief=req.brief, script=script,
            reasoning=reasoning or None, status="complete" if complete else "truncated",
            model=model, config_id=cfg.id, **usage)

    def _record(self, report: CallReport, source: str = "live") -> Diagnostic | None:
        return record_call(self._recorder, report, "script", source=source)


def cancelled_events() -> list[StreamEvent]:
    """What a script stream ends with when the worker shuts down under it: no usage was
    reported, nothing is saved (the vendor was cut off)."""
    return [StreamEvent("usage", Usage().to_dict()),
            StreamEvent("end", {"reason": "cancelled", "error": None, "diagnostic": None,
                                "draft_id": None})]
