"""LLMStream: one streamed model call, owning its timeouts and its cancellation.

    async with client.stream(cfg, req) as stream:
        async for event in stream:        # TextDelta | ReasoningDelta | ToolCall | Usage | Finish
            ...

A stream either ends with exactly one `Finish` (carrying a diagnostic when no usable answer
came, or the answer was cut; `Finish.usable` says which), or raises `LLMCallError` (transport
failure, HTTP error, timeout, malformed chunk, disconnect, in-band vendor error, a body past
its pool's `max_response_bytes`) and yields nothing more. The answer is collected and classified by `Answer` (answer.py), as `complete()`
does, when the consumer receives each event.

Time limits, all measured on the loop clock from the moment the request is sent:
  total      the whole call (`req.timeout_s or cfg.timeout_s`);
  ttft       until the first token (text, reasoning or tool call; role-only chunks and
             keep-alives do not count);
  read       between data events once tokens flow. `: keep-alive` comments are bytes, so
             the transport's own read timeout never fires on them; this one does.
  grace      once a finish reason came, the trailer (a usage chunk, `[DONE]`) gets
             `FINISH_GRACE_S` (at most `read`) after the last data event; then the stream
             ends as at EOF (usage as known), not as a timeout.

`aclose()` (or leaving `async with`, or cancelling the consuming task) closes the HTTP
response at once: the socket is dropped, so the server sees the disconnect and stops
generating (barge-in). Observable state for the diagnostics recorder: `ttft_ms`,
`latency_ms`, `finish_reason`, `diagnostic`, and what the consumer has received so far:
`text`, `reasoning`, `tool_calls`, `usage`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from callout_server.llm.adapters import InBandError, make_adapter
from callout_server.llm.answer import Answer
from callout_server.llm.diagnostics import Diagnostic, Locale
from callout_server.llm.errors import LLMCallError
from callout_server.llm.events import Event, Finish, ToolCall, Usage
from callout_server.llm.key_echo import AnswerEcho
from callout_server.llm.sse import MAX_LINE_BYTES, SSEEvent, SSELineTooLong, SSEParser
from callout_server.llm.transport import (
    ERROR_BODY_LIMIT,
    TRANSPORT_ERRORS,
    call_error,
    inband_error,
    refused_error,
    refused_target_error,
    request_headers,
    status_error,
    too_large_error,
    transport_error,
    unsendable_error,
)

if TYPE_CHECKING:
    from callout_server.llm.config import LLMConfig
    from callout_server.llm.request_body import BuiltRequest
    from callout_server.llm.targets import TargetPolicy

# A whole answer (finish reason sent) is never made a read timeout by a vendor left open.
FINISH_GRACE_S = 1.5


class LLMStream:
    """Async iterator and async context manager over one streamed call's events."""

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        max_response_bytes: int,
        targets: TargetPolicy,
        cfg: LLMConfig,
        built: BuiltRequest,
        locale: Locale,
        total_timeout_s: float,
        ttft_timeout_s: float,
        read_timeout_s: float,
        connect_timeout_s: float,
    ) -> None:
        self._http = http
        self._max_bytes = max_response_bytes
        self._targets = targets
        self._received = 0  # body bytes read so far
        self._url = built.url
        self._body = built.body
        self._key = cfg.api_key  # used for the header and for scrubbing; never shown
        # The key written back by the vendor is cleaned out of the answer (key_echo.py).
        self._echo = AnswerEcho(self._key) if self._key else None
        self._locale = locale
        self._total_s = total_timeout_s
        self._ttft_s = ttft_timeout_s
        self._read_s = read_timeout_s
        self._connect_s = min(connect_timeout_s, total_timeout_s)
        self._ends_on_finish = cfg.api_style == "responses"  # no [DONE] in that style
        self._adapter = make_adapter(cfg.api_style, cfg.model, built.row)
        self._parser = SSEParser(max_line_bytes=min(max_response_bytes, MAX_LINE_BYTES))
        self._queue: deque[Event] = deque()
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._t0 = 0.0  # loop clock at send
        self._perf0 = 0.0
        self._last_data = 0.0
        self._done = False  # no more events will be produced
        self._closed = False
        self._answer = Answer()  # what the consumer has received
        self.model = cfg.model
        self.dialect = built.dialect
        self.thinking = built.thinking
        self.max_tokens = built.max_tokens
        self.ttft_ms: float | None = None
        self.latency_ms: float | None = None
        self.finish_reason: str | None = None
        self.diagnostic: Diagnostic | None = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else "done" if self._done else "open"
        return f"<LLMStream model={self.model!r} dialect={self.dialect!r} {state}>"

    @property
    def text(self) -> str:
        """The answer text received so far (reasoning excluded)."""
        return self._answer.text

    @property
    def reasoning(self) -> str:
        return self._answer.reasoning

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self._answer.tool_calls

    @property
    def usage(self) -> Usage | None:
        return self._answer.usage

    @property
    def keepalives(self) -> int:
        """Comment lines (keep-alives) the server sent: a trickle with no data is a stall."""
        return self._parser.comments

    # -- protocol --------------------------------------------------------------------------

    async def __aenter__(self) -> LLMStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> LLMStream:
        return self

    async def __anext__(self) -> Event:
        while True:
            if not self._queue:
                if self._done:
                    raise StopAsyncIteration
                try:
                    await self._fill()
                except LLMCallError as exc:
                    self.diagnostic = exc.diagnostic
                    await self._end()
                    raise
                except BaseException:  # cancellation (barge-in) or a bug: never leave the socket open
                    await self._end()
                    raise
                if self._done:
                    await self._release()  # hand the connection back before the caller dawdles
                if not self._queue:
                    raise StopAsyncIteration
            event = self._without_key(self._queue.popleft())
            if event is not None:
                return self._deliver(event)

    def _without_key(self, event: Event) -> Event | None:
        """The event as its consumer may see it: no trace of the key (key_echo.py)."""
        if self._echo is None:
            return event
        if isinstance(event, Finish):
            held = self._echo.held()  # the text held back, before the end
            if held:
                self._queue.appendleft(event)
                self._queue.extendleft(reversed(held[1:]))
                return held[0]
            return event
        return self._echo.event(event)

    def _deliver(self, event: Event) -> Event:
        """Hand one event to the consumer; the answer is what was handed over."""
        if isinstance(event, Finish):
            event = self._answer.finish(event, max_tokens=self.max_tokens,
                                        thinking=self.thinking, locale=self._locale)
            self.diagnostic = event.diagnostic
        else:
            self._answer.add(event)
        return event

    async def aclose(self) -> None:
        """Stop now: close the upstream response (the server sees the disconnect)."""
        if self._closed:
            return
        self._closed = True
        if not self._done and self.diagnostic is None and self._response is not None:
            self.diagnostic = Diagnostic.make("cancelled", self._locale)
        self._queue.clear()
        await self._end()

    # -- internals -------------------------------------------------------------------------

    async def _end(self) -> None:
        self._done = True
        if self.latency_ms is None and self._perf0:
            self.latency_ms = (time.perf_counter() - self._perf0) * 1000.0
        await self._release()

    async def _release(self) -> None:
        response, self._response = self._response, None
        self._chunks = None
        if response is not None and not response.is_closed:
            try:
                await response.aclose()
            except TRANSPORT_ERRORS:
                pass  # closing a broken connection: nothing left to tell anyone

    def _fail(self, code: str, **fields: Any) -> LLMCallError:
        return call_error(code, self._locale, self._key, max_tokens=self.max_tokens, **fields)

    def _deadline(self) -> tuple[float, str]:
        total = self._t0 + self._total_s
        if self._adapter.finished:  # only the trailer is due: whichever limit, the answer stands
            return min(total, self._last_data + min(FINISH_GRACE_S, self._read_s)), "grace"
        if self.ttft_ms is None:
            limit, which = self._t0 + self._ttft_s, "ttft"
        else:
            limit, which = self._last_data + self._read_s, "read"
        return (total, "total") if total <= limit else (limit, which)

    def _timed_out(self, which: str) -> LLMCallError:
        if which == "ttft":
            return self._fail("timeout", reason="ttft", args={"seconds": self._ttft_s})
        if which == "read":
            if self._parser.comments:
                return self._fail("timeout", reason="stalled_keepalive", args={
                    "seconds": self._read_s, "comments": self._parser.comments})
            return self._fail("timeout", reason="stalled", args={"seconds": self._read_s})
        return self._fail("timeout", reason="stream_total", args={"seconds": self._total_s})

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        self._t0 = loop.time()
        self._perf0 = time.perf_counter()
        self._last_data = self._t0
        unsendable = unsendable_error(
            self._key, self._url, self._locale, max_tokens=self.max_tokens)
        if unsendable is not None:
            raise unsendable
        refusal = self._targets.literal(self._url)
        if refusal is not None:
            raise refused_target_error(refusal, self._locale, self._key,
                                       max_tokens=self.max_tokens)
        try:
            request = self._http.build_request(
                "POST",
                self._url,
                content=orjson.dumps(self._body),
                headers=request_headers(self._key, stream=True),
                # read=None: silence is judged here (keep-alives would reset the transport's).
                timeout=httpx.Timeout(self._total_s, connect=self._connect_s, read=None),
            )
        except ValueError as exc:  # e.g. a non-ASCII header; the text may quote the value
            raise refused_error(exc, self._locale, self._key, max_tokens=self.max_tokens) from None
        deadline, which = self._deadline()
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._http.send(request, stream=True)
                self._response = response
                if response.status_code >= 300:
                    body = b""
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) >= ERROR_BODY_LIMIT:
                            break
                    raise status_error(response.status_code, body, self._locale, self._key,
                                       retry_after=response.headers.get("retry-after"),
                                       max_tokens=self.max_tokens)
        except TimeoutError as exc:
            raise self._timed_out(which) from exc
        except TRANSPORT_ERRORS as exc:
            raise transport_error(exc, self._locale, self._key, max_tokens=self.max_tokens) from exc
        except ValueError as exc:  # a header or URL the library refuses at send time
            raise refused_error(exc, self._locale, self._key, max_tokens=self.max_tokens) from None
        self._chunks = response.aiter_bytes()

    async def _fill(self) -> None:
        if self._chunks is None:
            await self._open()
            if self._closed:  # closed by another task while we were connecting
                self._done = True
                return
        chunks = self._chunks
        assert chunks is not None
        loop = asyncio.get_running_loop()
        while not self._queue and not self._done:
            deadline, which = self._deadline()
            try:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(chunks, None)
            except TimeoutError as exc:
                if which == "grace":  # a half-sent trailer line is dropped, not judged
                    self._finish()
                    return
                raise self._timed_out(which) from exc
            except TRANSPORT_ERRORS as exc:
                if self._closed:  # aclose() from another task broke the read: just stop
                    self._done = True
                    return
                raise transport_error(
                    exc, self._locale, self._key, max_tokens=self.max_tokens, status=200
                ) from exc
            if chunk is None:
                self._on_eof()
                return
            self._received += len(chunk)
            if self._received > self._max_bytes:  # raised: `__anext__` closes the response
                raise too_large_error(self._max_bytes, self._locale, self._key, status=200,
                                      max_tokens=self.max_tokens)
            now = loop.time()
            try:
                events = self._parser.feed(chunk)
            except SSELineTooLong as exc:
                raise self._line_too_long(exc) from exc
            for event in events:
                self._on_sse(event, now)
                if self._done:
                    return

    def _on_sse(self, event: SSEEvent, now: float) -> None:
        if event.is_done:
            self._finish()
            return
        self._last_data = now
        try:
            obj = orjson.loads(event.data)
        except orjson.JSONDecodeError as exc:
            raise self._malformed(event, str(exc)) from exc
        if not isinstance(obj, dict):
            raise self._malformed(event, "not a JSON object")
        adapter = self._adapter
        try:
            events = adapter.feed(obj)
        except InBandError as exc:
            raise inband_error(exc.detail, self._locale, self._key,
                               max_tokens=self.max_tokens) from exc
        if self.ttft_ms is None and adapter.saw_output:
            self.ttft_ms = (time.perf_counter() - self._perf0) * 1000.0
        self._queue.extend(events)
        if self._ends_on_finish and adapter.finished:
            self._finish()

    def _malformed(self, event: SSEEvent, why: str) -> LLMCallError:
        # The chunk itself is model output (call data): say where and how big, not what.
        return self._fail("upstream_error", status=200, reason="malformed_chunk", detail=why[:80],
                          args={"index": self._parser.events, "chars": len(event.data),
                                "event": event.event[:40]})

    def _line_too_long(self, exc: SSELineTooLong) -> LLMCallError:
        return self._fail("response_too_large", status=200, reason="line_limit",
                          args={"limit": exc.limit})

    def _on_eof(self) -> None:
        try:
            events = self._parser.close()
        except SSELineTooLong as exc:
            raise self._line_too_long(exc) from exc
        for event in events:
            self._on_sse(event, asyncio.get_running_loop().time())
            if self._done:
                return
        if self._adapter.finished:
            self._finish()  # a finish_reason arrived; only the [DONE] sentinel is missing
            return
        raise self._fail("upstream_error", status=200, reason="closed_before_end")

    def _finish(self) -> None:
        closing = self._adapter.close()  # pending text, tool calls, Usage?, then Finish
        last = closing[-1]
        assert isinstance(last, Finish)
        self.finish_reason = last.reason
        self._queue.extend(closing)  # classified when delivered (`_deliver`)
        self._done = True
        self.latency_ms = (time.perf_counter() - self._perf0) * 1000.0
