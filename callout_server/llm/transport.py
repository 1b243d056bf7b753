"""The long-lived pooled HTTP client every tier shares, and translation of its failures.

Why aiohttp underneath httpx: measured on this machine against a trivial local upstream
(`bench/bench_client.py`), httpx's own pool (httpcore) collapses under concurrency while the
`httpx-aiohttp` transport keeps an httpx.AsyncClient interface and serves an order of magnitude
more requests at a fraction of the tail latency. One client per process, created once:
connection set-up is the expensive part of a sub-second NLU call. Non-streamed calls skip
both layers: `complete()` posts on the lane's lean pool (lean_http.py, lane.py), whose
failures are aiohttp's exception classes, so the table below reads them too.

Timeouts passed per request map onto aiohttp as: connect → `sock_connect`, read →
`sock_read` (time between bytes), pool → aiohttp's `connect` (pool wait + connect). Total
deadlines, time-to-first-token and stall detection are not transport concerns: the client and
the stream object enforce them with the event loop's clock.
"""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import orjson

try:  # aiohttp is the transport's dependency; without it we still translate httpx errors.
    import aiohttp
except ImportError:  # pragma: no cover
    aiohttp = None  # type: ignore[assignment]

from aiohttp.abc import AbstractResolver
from httpx_aiohttp import AiohttpTransport

from callout_server.llm.credentials import unsendable
from callout_server.llm.diagnostics import Diagnostic, Locale
from callout_server.llm.errors import LLMCallError
from callout_server.llm.masking import scrub
from callout_server.llm.targets import Refusal, target_refused

MAX_CONNECTIONS = 512
# The largest answer read by default: an upstream that sends more is cut off unread
# (`response_too_large`), so a runaway or hostile server cannot fill the worker's memory.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# What is kept of an error body (HTTP status >= 300): its excerpt is all a diagnostic shows.
ERROR_BODY_LIMIT = 64 * 1024
KEEPALIVE_EXPIRY_S = 30.0
CONNECT_TIMEOUT_S = 5.0
# Longest detail a diagnostic carries; an upstream's own words (error body, in-band error)
# get a shorter excerpt: `/test` must not turn into a reader of any URL's error pages.
_DETAIL_LIMIT = 300
EXCERPT_LIMIT = 200
# Text beyond this is dropped before scrubbing (cost bound). Safe: each masked run shrinks
# the text by at most 60 %, so nothing past the window can reach the first _DETAIL_LIMIT.
_SCRUB_WINDOW = 8192


@dataclass(frozen=True, slots=True)
class PoolLimits:
    """One connection pool of the client: how many upstream connections it may hold at once
    (a call beyond that waits for one, within its own time limits), and the largest answer
    it reads, streamed or not."""

    max_connections: int = MAX_CONNECTIONS
    max_response_bytes: int = MAX_RESPONSE_BYTES


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The process's one verifying TLS context (certifi's CAs, or SSL_CERT_FILE/SSL_CERT_DIR as
    httpx reads them). Loading the CA bundle costs ~50 ms: once per process, not once per
    pool (a client holds several, and a configuration save builds a new client)."""
    return httpx.create_ssl_context(trust_env=True)


def make_transport(
    *,
    max_connections: int = MAX_CONNECTIONS,
    keepalive_expiry: float = KEEPALIVE_EXPIRY_S,
    resolver: Callable[[], AbstractResolver | None] | None = None,
) -> AiohttpTransport:
    """The pooled aiohttp transport; its session is opened on first use, on the running loop.

    `resolver` makes the resolver its connections use (`targets.TargetPolicy.resolver`),
    called when the session opens (aiohttp's resolvers belong to a running loop)."""
    transport = AiohttpTransport(verify=default_ssl_context(), limits=httpx.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=keepalive_expiry,
    ))
    if resolver is not None:
        def session() -> aiohttp.ClientSession:
            return aiohttp.ClientSession(connector=aiohttp.TCPConnector(
                limit=max_connections, keepalive_timeout=keepalive_expiry,
                ssl=transport.ssl_context, resolver=resolver()))

        transport.client = session
    return transport


def aiohttp_session(transport: AiohttpTransport) -> aiohttp.ClientSession:
    """The transport's aiohttp session (the same pool httpx requests use), opened if needed."""
    if not isinstance(transport.client, aiohttp.ClientSession):
        transport.client = transport.get_client()
    return transport.client


def make_http_client(
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> httpx.AsyncClient:
    """The shared pooled client (httpx interface, aiohttp transport). Create once per process."""
    return httpx.AsyncClient(
        transport=transport or make_transport(),
        timeout=httpx.Timeout(None, connect=connect_timeout),
        follow_redirects=False,
    )


def make_plain_http_client(*, max_connections: int = MAX_CONNECTIONS) -> httpx.AsyncClient:
    """httpx's default transport, kept for the benchmark's comparison only."""
    return httpx.AsyncClient(
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
        timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
    )


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """(body, complete): the whole body, or its first `limit` bytes and False when it is
    longer, in which case the connection is closed without reading the rest.

    A declared length over the limit is refused before a byte is read; a body without one
    (chunked) or compressed (the declared length is not what it expands to) is counted as
    it arrives. A declared, uncompressed length within the limit is read at once: the hot
    path's answers pay nothing for the bound.
    """
    declared = response.content_length
    if declared is not None and declared > limit:
        response.close()
        return b"", False
    if declared is not None and not response.headers.get("content-encoding"):
        return await response.read(), True
    parts: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > limit:
            parts.append(chunk[: len(chunk) - (size - limit)])
            response.close()
            return b"".join(parts), False
        parts.append(chunk)
    return b"".join(parts), True


def too_large_error(limit: int, locale: Locale, secret: str, **fields: Any) -> LLMCallError:
    """The upstream's answer passed the pool's `max_response_bytes`: cut off, never buffered."""
    return call_error("response_too_large", locale, secret, reason="response_limit",
                      args={"limit": limit}, **fields)


def vendor_error_message(body: bytes) -> str:
    """The vendor's own words from an error body, never the request; uncut and unscrubbed
    (`call_error` scrubs, then cuts).

    Shapes seen: OpenAI `{"error": {"message", "type", "code"}}`, `{"error": "text"}`,
    DashScope native `{"code", "message"}`, FastAPI/vLLM `{"detail": ...}`, `{"object":
    "error", "message"}` (older vLLM), and plain text or HTML from proxies.
    """
    text = body.decode("utf-8", "replace").strip()
    try:
        obj: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _squash(text) or "(empty body)"
    message: Any = None
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict):
            message = err.get("message") or err.get("msg") or err.get("code") or err.get("type")
        elif err:
            message = err
        message = message or obj.get("message") or obj.get("msg") or obj.get("detail")
    if message is None:
        return _squash(text)
    if not isinstance(message, str):
        message = orjson.dumps(message).decode()
    return _squash(message)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _connector_detail(exc: BaseException) -> str:
    """aiohttp's words for a failed connect, without `ssl:default` (said of plain http URLs
    too): host, port and the operating system's reason ("Connection refused")."""
    if not isinstance(exc, aiohttp.ClientConnectorError) or isinstance(exc, aiohttp.ClientSSLError):
        return str(exc)  # a timeout, a TLS failure (certificate...): their own words
    errno = exc.os_error.errno
    reason = os.strerror(errno) if isinstance(errno, int) and errno > 0 else exc.strerror
    return f"Cannot connect to host {exc.host}:{exc.port} [{reason}]"


def describe_transport_error(exc: BaseException) -> tuple[str, str | None, str]:
    """(diagnostic code, reason, detail) for an exception raised by the HTTP layer; the
    detail is the library's own words.

    The aiohttp transport maps every `aiohttp.ClientConnectionError` to `httpx.ConnectTimeout`,
    including a server that hung up or a response we closed ourselves, so the original
    aiohttp exception (`__cause__`) decides where it is more precise than the httpx type.
    """
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) else exc
    name = type(cause or exc).__name__
    detail = str(exc) or name
    if aiohttp is not None and isinstance(cause, aiohttp.ClientError):
        if isinstance(cause, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
            return "connect_error", None, _connector_detail(cause)
        if isinstance(cause, aiohttp.ServerTimeoutError):
            return "timeout", "read_timeout", detail
        if isinstance(cause, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
            return "upstream_error", "server_closed", detail
        if isinstance(cause, aiohttp.ClientConnectionError):
            return "upstream_error", "connection_lost", detail
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.UnsupportedProtocol):
        return "connect_error", None, detail
    if isinstance(exc, httpx.TimeoutException):
        return "timeout", None, detail
    if isinstance(exc, httpx.ReadError | httpx.RemoteProtocolError | httpx.WriteError):
        return "upstream_error", "connection_lost", detail
    if isinstance(exc, httpx.InvalidURL):
        return "connect_error", None, detail
    if isinstance(exc, TimeoutError):
        return "timeout", None, detail
    if isinstance(exc, OSError):
        return "connect_error", None, detail
    return "upstream_error", None, detail


# -- the one translation point: HTTP outcomes → LLMCallError -----------------------------------


def request_headers(api_key: str, *, stream: bool) -> dict[str, str]:
    """Headers for one call. `Authorization` only when a key is set (local servers have none).

    Both ask for `identity` encoding: a compressed SSE body is buffered by some proxies and
    servers, which defeats time-to-first-token, and a compressed answer's declared length
    says nothing of what it expands to (the size bound counts what it reads).
    """
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream" if stream else "application/json",
        "accept-encoding": "identity",
    }
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def call_error(code: str, locale: Locale, secret: str, *, limit: int = _DETAIL_LIMIT,
               **fields: Any) -> LLMCallError:
    """An LLMCallError whose detail has been scrubbed of the key, then cut to `limit`.

    The one way a detail leaves the client: the diagnostic's message, the call log, the
    tiers' answers and `/test` are all built from it. Scrubbing first means a key sitting
    across the cut cannot leave a piece of itself behind. `reason` and `args` (in
    `fields`) say in our words what happened; `detail` is the outside world's.
    """
    detail = fields.pop("detail", None)
    if detail is not None:
        fields["detail"] = scrub(str(detail)[:_SCRUB_WINDOW], secret)[:limit]
    return LLMCallError(Diagnostic.make(code, locale, **fields))


def refused_target_error(refusal: Refusal, locale: Locale, secret: str, **fields: Any
                         ) -> LLMCallError:
    """A target the policy refuses (targets.py): named as configured, with its address."""
    return call_error("connect_error", locale, secret, reason="blocked_target",
                      args={"host": refusal.host, "address": refusal.address}, **fields)


def transport_error(exc: BaseException, locale: Locale, secret: str, **fields: Any) -> LLMCallError:
    refusal = target_refused(exc)  # the resolver refused what the name resolves to now
    if refusal is not None:
        return refused_target_error(refusal, locale, secret, **fields)
    code, reason, detail = describe_transport_error(exc)
    return call_error(code, locale, secret, detail=detail, reason=reason, **fields)


def status_error(
    status: int, body: bytes, locale: Locale, secret: str, *, retry_after: str | None = None,
    **fields: Any
) -> LLMCallError:
    detail = vendor_error_message(body) if body else None
    if 300 <= status < 400:  # never followed: the base URL must name the server itself
        fields.setdefault("reason", "redirect_not_followed")
    error = call_error("upstream_error", locale, secret, status=status, detail=detail,
                       limit=EXCERPT_LIMIT, **fields)
    error.retry_after_s = parse_retry_after(retry_after)
    return error


# Longest Retry-After honoured: a vendor asking for an hour is cooled down for this long and
# probed again, not forgotten.
RETRY_AFTER_MAX_S = 300.0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date); None if absent."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):  # a year past datetime's: absent
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX_S)


def inband_error(detail: str, locale: Locale, secret: str, **fields: Any) -> LLMCallError:
    """A failure the vendor reported inside a 200 response (its own words: an excerpt)."""
    return call_error("upstream_error", locale, secret, status=200, detail=detail,
                      limit=EXCERPT_LIMIT, **fields)


def unsendable_error(api_key: str, url: str, locale: Locale, **fields: Any) -> LLMCallError | None:
    """The diagnostic for a request that cannot be sent at all, checked before sending.

    A key or base URL that got past validation (a row saved by an older version, a
    configuration built in code) ends as a `connect_error` the tiers handle like any other
    (fallback intent, `end` event), never as the HTTP library's ValueError.
    """
    problem = unsendable(api_key, url)
    return None if problem is None else call_error("connect_error", locale, api_key,
                                                   reason=problem, **fields)


def refused_error(exc: ValueError, locale: Locale, secret: str, **fields: Any) -> LLMCallError:
    """The HTTP library refused to build or send the request (a header or URL it rejects).

    Only the exception's type is kept: its text may quote the offending header value.
    """
    return call_error("connect_error", locale, secret, reason="http_library_refused",
                      args={"error": type(exc).__name__}, **fields)


# Errors the HTTP layer may raise; everything else is a bug and propagates as such.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.HTTPError, httpx.InvalidURL, OSError)
if aiohttp is not None:
    TRANSPORT_ERRORS += (aiohttp.ClientError,)
