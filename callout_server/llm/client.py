"""The one OpenAI-compatible client every tier shares.

    client = LLMClient()                               # once per process
    completion = await client.complete(cfg, req)       # NLU, scripts: one JSON answer
    async with client.stream(cfg, req) as stream:      # chat: events as they arrive
        async for event in stream: ...

Exceptions (errors.py): every failure is an `LLMCallError` carrying a Diagnostic —
    timeout          no (complete) answer within the call's time limits
    connect_error    the server could not be reached, or may not be: a cloud-metadata or
                     link-local target (targets.py), by its address or by what its name
                     resolves to at connection time
    upstream_error   HTTP error status (with `status` and the vendor's own message), an
                     in-band error object/event, a malformed body or chunk, a disconnect
    response_too_large
                     the answer passed its pool's `max_response_bytes` (cut off unread)
    truncated_by_reasoning / truncated / empty_output
                     the call finished but left no usable answer (classify.py)
httpx and aiohttp exceptions are translated once (transport.py) and chained with `from`.

The API key lives only in the Authorization header of the outgoing request; details that
leave the client pass through `scrub()` once (`transport.call_error`), and no repr here
shows headers or configuration. A key or URL the HTTP library could not send is caught
before sending (`transport.unsendable_error`) and ends as a `connect_error` diagnostic.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import aiohttp
import orjson

from callout_server.llm.adapters import InBandError, make_adapter
from callout_server.llm.answer import Answer
from callout_server.llm.config import LLMConfig
from callout_server.llm.diagnostics import Diagnostic
from callout_server.llm.errors import LLMCallError
from callout_server.llm.events import Finish, ToolCall, Usage
from callout_server.llm.key_echo import clean_text, clean_tool_call
from callout_server.llm.lane import Lane
from callout_server.llm.request import LLMRequest
from callout_server.llm.request_body import build_request
from callout_server.llm.stream import LLMStream
from callout_server.llm.targets import TargetPolicy
from callout_server.llm.timeouts import time_limit
from callout_server.llm.transport import (
    CONNECT_TIMEOUT_S,
    ERROR_BODY_LIMIT,
    TRANSPORT_ERRORS,
    PoolLimits,
    aiohttp_session,
    call_error,
    inband_error,
    read_bounded,
    refused_error,
    refused_target_error,
    request_headers,
    status_error,
    too_large_error,
    transport_error,
    unsendable_error,
)

log = logging.getLogger(__name__)

# Longest silence tolerated inside a stream (and before its first token when no separate
# time-to-first-token limit is given). Tiers pass tighter values for live calls.
READ_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class Completion:
    """A non-streamed answer. `text` is the answer only: reasoning is never part of it."""

    text: str
    reasoning: str
    tool_calls: list[ToolCall]
    usage: Usage
    finish_reason: str | None
    latency_ms: float
    model: str
    dialect: str
    thinking: bool | None  # the switch we sent: False = suppressed, None = vendor default
    max_tokens: int  # the output budget we sent
    # Set when the answer is usable but suspect, e.g. `truncated` (text cut by the budget).
    diagnostic: Diagnostic | None = None
    extra: dict[str, object] = field(default_factory=dict)


class LLMClient:
    """Shared, long-lived: the pooled HTTP clients under all tiers. Safe for concurrent use.

    One connection pool per name in `pools`, chosen by the configuration's `tier` label
    (which the client reads for nothing else), so a burst on one tier can never take the
    connections another needs; a label without a pool of its own uses `default_pool`. Two
    ways onto a pool (lane.py), under one connection limit: the non-streamed hot path posts
    on its lean HTTP/1.1 pool (`_post`, lean_http.py), streams go through httpx on the
    aiohttp transport. Tests drive exactly this
    pair against a real local server (tests/fixtures/upstream.py).
    """

    def __init__(
        self,
        *,
        locale: Literal["zh", "en"] = "zh",
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        read_timeout_s: float = READ_TIMEOUT_S,
        pools: Mapping[str, PoolLimits] | None = None,
        default_pool: PoolLimits | None = None,
        targets: TargetPolicy | None = None,
    ) -> None:
        self.targets = targets or TargetPolicy()
        self._default = Lane(default_pool or PoolLimits(), self.targets)
        self._lanes = {name: Lane(limits, self.targets)
                       for name, limits in (pools or {}).items()}
        self.locale: Literal["zh", "en"] = locale
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s

    def __repr__(self) -> str:
        return f"LLMClient(locale={self.locale!r})"

    def limits(self, cfg: LLMConfig) -> PoolLimits:
        """The bounds of the pool `cfg`'s calls run on."""
        return self._lane(cfg).limits

    def _lane(self, cfg: LLMConfig) -> Lane:
        return self._lanes.get(cfg.tier, self._default)

    async def aclose(self) -> None:
        for lane in (self._default, *self._lanes.values()):
            await lane.aclose()  # its lean pool, the transport and its aiohttp session

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- non-streamed ----------------------------------------------------------------------

    async def complete(self, cfg: LLMConfig, req: LLMRequest) -> Completion:
        """One answer. Raises LLMCallError when there is none (see module docstring)."""
        built = build_request(cfg, req, stream=False)
        total = req.timeout_s or cfg.timeout_s
        key, locale = cfg.api_key, self.locale
        numbers = {"max_tokens": built.max_tokens}
        unsendable = unsendable_error(key, built.url, locale, **numbers)
        if unsendable is not None:
            raise unsendable
        refusal = self.targets.literal(built.url)
        if refusal is not None:
            raise refused_target_error(refusal, locale, key, **numbers)
        lane = self._lane(cfg)
        start = time.perf_counter()
        try:
            async with time_limit(total):  # one loop timer for all calls
                status, content, retry_after = await self._post(
                    lane, built.url, orjson.dumps(built.body),
                    request_headers(key, stream=False), total)
        except TimeoutError as exc:  # before TRANSPORT_ERRORS: TimeoutError is an OSError
            raise call_error("timeout", locale, key, reason="total_timeout",
                             args={"seconds": total}, **numbers) from exc
        except TRANSPORT_ERRORS as exc:
            raise transport_error(exc, locale, key, **numbers) from exc
        except ValueError as exc:  # a header or URL the library refuses; its text may quote it
            raise refused_error(exc, locale, key, **numbers) from None
        latency_ms = (time.perf_counter() - start) * 1000.0
        if content is None:
            raise too_large_error(lane.limits.max_response_bytes, locale, key, status=status,
                                  **numbers)
        if status >= 300:
            raise status_error(status, content, locale, key, retry_after=retry_after, **numbers)

        adapter = make_adapter(cfg.api_style, cfg.model, built.row)
        try:
            obj = orjson.loads(content)
            if not isinstance(obj, dict):
                raise orjson.JSONDecodeError("not a JSON object", "", 0)
            events = adapter.parse(obj)
        except orjson.JSONDecodeError as exc:
            raise call_error("upstream_error", locale, key, status=status, reason="malformed_body",
                             args={"bytes": len(content)}) from exc
        except InBandError as exc:
            raise inband_error(exc.detail, locale, key, **numbers) from exc

        answer = Answer()
        for event in events[:-1]:
            answer.add(event)
        end = events[-1]
        assert isinstance(end, Finish)  # parse() always ends with it
        finish = answer.finish(end, max_tokens=built.max_tokens, thinking=built.thinking,
                               locale=locale)
        if not finish.usable:
            assert finish.diagnostic is not None
            raise LLMCallError(finish.diagnostic)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "llm complete",
                extra={"model": cfg.model, "latency_ms": latency_ms, "finish": finish.reason},
            )
        return Completion(
            text=clean_text(answer.text, key),  # a key the vendor wrote back: **** (key_echo)
            reasoning=clean_text(answer.reasoning, key),
            tool_calls=[clean_tool_call(call, key) for call in answer.tool_calls],
            usage=answer.usage or Usage(),
            finish_reason=finish.reason,
            latency_ms=latency_ms,
            model=cfg.model,
            dialect=built.dialect,
            thinking=built.thinking,
            max_tokens=built.max_tokens,
            diagnostic=finish.diagnostic,
            extra=finish.extra,
        )

    async def _post(self, lane: Lane, url: str, body: bytes, headers: dict[str, str],
                    total: float) -> tuple[int, bytes | None, str | None]:
        """POST and read the body: (status, body bytes, Retry-After header); the body is
        None when an answer passed the pool's `max_response_bytes` (the connection is
        closed unread), an error body is kept up to `ERROR_BODY_LIMIT`.

        On the lane's lean pool (lean_http.py): aiohttp's client costs three times its CPU
        per POST, and httpx's layer on top of that twice again (bench/README.md). Its
        failures are aiohttp's exception classes, translated by `transport_error` like the
        streams'. A URL it does not take (credentials in it) goes through the lane's aiohttp
        session, under the same slots. The total limit is the caller's `asyncio.timeout`.
        Redirects are not followed: a 3xx is the answer (an `upstream_error`), never a
        request to wherever it points.
        """
        connect_s = min(self.connect_timeout_s, total)
        limit = lane.limits.max_response_bytes
        if lane.lean.handles(url):
            return await lane.lean.post(url, body, headers, limit=limit,
                                        error_limit=ERROR_BODY_LIMIT, connect_timeout_s=connect_s)
        timeout = aiohttp.ClientTimeout(sock_connect=connect_s)
        session = aiohttp_session(lane.transport)
        async with lane.slots, session.post(url, data=body, headers=headers, timeout=timeout,
                                            allow_redirects=False) as response:
            status = response.status
            if status >= 300:
                content, _ = await read_bounded(response, ERROR_BODY_LIMIT)
                return status, content, response.headers.get("retry-after")
            content, whole = await read_bounded(response, limit)
            return status, content if whole else None, None

    # -- streamed --------------------------------------------------------------------------

    def stream(
        self,
        cfg: LLMConfig,
        req: LLMRequest,
        *,
        ttft_timeout_s: float | None = None,
        read_timeout_s: float | None = None,
    ) -> LLMStream:
        """Events as they arrive; the request is sent on first iteration (or `async with`).

        `ttft_timeout_s`: longest wait for the first token (text, reasoning or tool call),
        default `read_timeout_s`; `read_timeout_s`: longest gap between data events once
        tokens flow (keep-alive comments do not count); the total limit is
        `req.timeout_s or cfg.timeout_s`.
        """
        read = read_timeout_s if read_timeout_s is not None else self.read_timeout_s
        lane = self._lane(cfg)
        return LLMStream(
            http=lane.http,
            targets=self.targets,
            max_response_bytes=lane.limits.max_response_bytes,
            cfg=cfg,
            built=build_request(cfg, req, stream=True),
            locale=self.locale,
            total_timeout_s=req.timeout_s or cfg.timeout_s,
            ttft_timeout_s=ttft_timeout_s if ttft_timeout_s is not None else read,
            read_timeout_s=read,
            connect_timeout_s=self.connect_timeout_s,
        )

