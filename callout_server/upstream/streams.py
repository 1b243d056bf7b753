"""A streamed call over a route: fails over only before its first event.

`PoolStream` looks like the client's `LLMStream` to its consumer (async iterator, async
context manager, the same observable state). Until the first event has been handed over it
may move the call to another endpoint (a 503, a refused connection, no first token in time);
after that an error is the consumer's, as with a single endpoint: nothing that reached a
listener is ever said twice. `report(diagnostic)` describes the call when its consumer is
done with it: the configuration and endpoint it ended on, what the stream reported.
"""

from __future__ import annotations

import time

from callout_server.llm import (
    Diagnostic,
    Event,
    LLMCallError,
    LLMConfig,
    LLMRequest,
    LLMStream,
    ToolCall,
    Usage,
)
from callout_server.upstream.calls import Call, Target
from callout_server.upstream.report import CallReport


class PoolStream:
    def __init__(self, call: Call, req: LLMRequest, *, ttft_timeout_s: float | None,
                 read_timeout_s: float | None) -> None:
        self._call = call
        self._req = req
        self._ttft_s = ttft_timeout_s
        self._read_s = read_timeout_s
        self._inner: LLMStream | None = None
        self._target: Target | None = None
        self._flowing = False  # an event was handed over: no more failover
        self._settled = True  # the current attempt's outcome was told to its endpoint
        self._t0 = time.perf_counter()
        self._inner_t0 = self._t0
        self._closed = False

    # -- where the call ended up ----------------------------------------------------------
    @property
    def config(self) -> LLMConfig:
        return self._target.pool.cfg if self._target else self._call.route.primary

    @property
    def endpoint(self) -> str | None:
        return self._target.endpoint.shown_url if self._target else None

    @property
    def attempts(self) -> int:
        return self._call.attempts

    def report(self, diagnostic: Diagnostic | None) -> CallReport:
        """The call so far, with its consumer's verdict (`diagnostic`)."""
        inner = self._inner
        if inner is None:  # nothing was sent (no endpoint, or closed before the first try)
            return self._call.report(diagnostic, self._target)
        ttft = self.ttft_ms
        return CallReport(self.config, self.endpoint, self._call.attempts, inner.dialect,
                          diagnostic, (time.perf_counter() - self._t0) * 1000, inner.usage,
                          inner.finish_reason, inner.max_tokens,
                          round(ttft, 1) if ttft is not None else None,
                          self._call.route.variant)

    # -- LLMStream's observable state -----------------------------------------------------
    @property
    def text(self) -> str:
        return self._inner.text if self._inner else ""

    @property
    def reasoning(self) -> str:
        return self._inner.reasoning if self._inner else ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self._inner.tool_calls if self._inner else []

    @property
    def usage(self) -> Usage | None:
        return self._inner.usage if self._inner else None

    @property
    def model(self) -> str:
        return self._inner.model if self._inner else self.config.model

    @property
    def dialect(self) -> str | None:
        return self._inner.dialect if self._inner else None

    @property
    def max_tokens(self) -> int | None:
        return self._inner.max_tokens if self._inner else None

    @property
    def finish_reason(self) -> str | None:
        return self._inner.finish_reason if self._inner else None

    @property
    def diagnostic(self) -> Diagnostic | None:
        return self._inner.diagnostic if self._inner else None

    @property
    def ttft_ms(self) -> float | None:
        """From the start of the call, failed attempts included: what the listener waited."""
        if self._inner is None or self._inner.ttft_ms is None:
            return None
        return (self._inner_t0 - self._t0) * 1000 + self._inner.ttft_ms

    @property
    def latency_ms(self) -> float | None:
        if self._inner is None or self._inner.latency_ms is None:
            return None
        return (self._inner_t0 - self._t0) * 1000 + self._inner.latency_ms

    # -- protocol -------------------------------------------------------------------------
    async def __aenter__(self) -> PoolStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> PoolStream:
        return self

    async def __anext__(self) -> Event:
        if not self._flowing:
            return await self._first()
        assert self._inner is not None
        try:
            event = await self._inner.__anext__()
        except StopAsyncIteration:
            self._settle(None)
            raise
        except LLMCallError as exc:
            self._settle(exc)
            raise self._call.failure(exc, self._target) from exc
        except BaseException:
            self._settle(None, abandoned=True)
            raise
        return event

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._inner is not None:
            await self._inner.aclose()
        self._settle(None, abandoned=True)

    # -- internals ------------------------------------------------------------------------
    async def _first(self) -> Event:
        call = self._call
        error: LLMCallError | None = None
        while True:
            target = await call.next_target(error)
            if target is None:
                raise call.failure(error, self._target)
            self._open(target)
            assert self._inner is not None
            try:
                event = await self._inner.__anext__()
            except StopAsyncIteration:  # an empty stream: nothing to fail over from
                self._flowing = True
                self._settle(None)
                raise
            except LLMCallError as exc:
                self._settle(exc)
                await self._inner.aclose()
                error = exc
                if exc.endpoint_fault:
                    continue
                raise call.failure(exc, target) from exc
            except BaseException:
                self._settle(None, abandoned=True)
                await self._inner.aclose()
                raise
            self._flowing = True
            return event

    def _open(self, target: Target) -> None:
        ep = target.endpoint
        assert ep.cfg is not None
        self._target = target
        self._settled = False
        self._inner_t0 = time.perf_counter()
        self._inner = self._call.client.stream(
            ep.cfg, self._req, ttft_timeout_s=self._ttft_s, read_timeout_s=self._read_s)

    def _settle(self, error: LLMCallError | None, *, abandoned: bool = False) -> None:
        """Tell the endpoint how its request ended (once) and free its slot."""
        target = self._target
        if self._settled or target is None:
            return
        self._settled = True
        ep = target.endpoint
        elapsed = time.perf_counter() - self._inner_t0
        now = time.monotonic()
        if error is not None:
            ep.failed(error, elapsed, now)
        elif abandoned and not self._flowing:
            ep.abandoned(elapsed, now)
        else:
            ep.answered(self._first_token_s(elapsed), now)
        target.end()

    def _first_token_s(self, elapsed: float) -> float:
        inner = self._inner
        if inner is not None and inner.ttft_ms is not None:
            return inner.ttft_ms / 1000
        return elapsed
