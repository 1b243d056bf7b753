"""A prototype: a keep-alive HTTP/1.1 POST over an asyncio protocol with httptools' parser.

Not part of the package: measured by bench/bench_http_client.py against the aiohttp session
`LLMClient.complete()` posts on today, to size what a lean client for the non-streamed path
would save before it is built for real (the design and what is missing: bench/README.md).

What it does: one pool per (scheme, host, port) of idle connections (LIFO, idle ones older
than `keepalive_s` closed), at most `max_connections` open (a semaphore), TLS through `ssl`,
the connect bounded by `connect_timeout_s`, `Content-Length` and chunked answers (httptools),
`Connection: close` honoured, an answer longer than `limit` cut off unread (the connection
closed), and a reused connection the server had closed before any byte of the answer came
back retried once on a new one. What it does not: the target policy's resolver check,
proxies, redirects (none are followed anyway), compressed bodies (it asks for `identity`).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from urllib.parse import urlsplit

import httptools


class ServerClosed(ConnectionError):
    """The connection ended before the whole answer (`reused`: before any byte of it)."""

    def __init__(self, reused_untouched: bool) -> None:
        super().__init__("server closed the connection")
        self.retryable = reused_untouched


class _Conn(asyncio.Protocol):
    __slots__ = ("chunks", "done", "got_bytes", "headers", "idle_since", "keep_alive",
                 "limit", "parser", "size", "status", "too_large", "transport", "waiter")

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[None] | None = None
        self.idle_since = 0.0
        self.keep_alive = True
        self._reset(0)

    def _reset(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.too_large = False
        self.got_bytes = False
        self.done = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.got_bytes = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self.keep_alive = False
        self.transport = None
        if not self.done:
            self._fail(ServerClosed(not self.got_bytes))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        declared = self.headers.get(b"content-length")
        if declared is not None and int(declared) > self.limit:
            self._cut()

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > self.limit:
            self._cut()
            return
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        self.done = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    # --
    def _cut(self) -> None:
        self.too_large = True
        self.done = True
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        self.done = True
        self.keep_alive = False
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)


class LeanPool:
    def __init__(self, *, max_connections: int = 512, keepalive_s: float = 30.0,
                 connect_timeout_s: float = 5.0, ssl_context: ssl.SSLContext | None = None
                 ) -> None:
        self._idle: dict[tuple[str, str, int], deque[_Conn]] = {}
        self._slots = asyncio.Semaphore(max_connections)
        self._keepalive_s = keepalive_s
        self._connect_timeout_s = connect_timeout_s
        self._ssl = ssl_context
        self._urls: dict[str, tuple[tuple[str, str, int], bytes]] = {}

    def _target(self, url: str) -> tuple[tuple[str, str, int], bytes]:
        hit = self._urls.get(url)
        if hit is None:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host = parts.hostname or ""
            hostport = host if parts.port is None else f"{host}:{parts.port}"
            head = f"POST {path} HTTP/1.1\r\nHost: {hostport}\r\n".encode()
            hit = self._urls[url] = ((parts.scheme, host, port), head)
        return hit

    async def _connect(self, key: tuple[str, str, int]) -> _Conn:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        ctx = None
        if scheme == "https":
            ctx = self._ssl or ssl.create_default_context()
        async with asyncio.timeout(self._connect_timeout_s):
            _, conn = await loop.create_connection(_Conn, host, port, ssl=ctx)
        return conn

    async def post(self, url: str, body: bytes, headers: dict[str, str], limit: int
                   ) -> tuple[int, bytes | None, dict[bytes, bytes]]:
        key, head = self._target(url)
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = b"".join((head, extra.encode(), b"accept-encoding: identity\r\n",
                            b"content-length: ", str(len(body)).encode(), b"\r\n\r\n", body))
        async with self._slots:
            for _ in range(2):
                conn, reused = self._checkout(key)
                if conn is None:
                    conn = await self._connect(key)
                try:
                    return await self._exchange(conn, key, request, limit)
                except ServerClosed as exc:
                    if not (reused and exc.retryable):
                        raise
            raise AssertionError("unreachable")

    def _checkout(self, key: tuple[str, str, int]) -> tuple[_Conn | None, bool]:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.transport is not None and now - conn.idle_since < self._keepalive_s:
                return conn, True
            if conn.transport is not None:
                conn.transport.close()
        return None, False

    async def _exchange(self, conn: _Conn, key: tuple[str, str, int], request: bytes,
                        limit: int) -> tuple[int, bytes | None, dict[bytes, bytes]]:
        conn._reset(limit)
        waiter = conn.waiter = asyncio.get_running_loop().create_future()
        assert conn.transport is not None
        conn.transport.write(request)
        try:
            await waiter
        except BaseException:
            if conn.transport is not None:
                conn.transport.close()  # cancelled or failed mid-answer: never reused
            raise
        finally:
            conn.waiter = None
        if conn.too_large:
            return conn.status, None, conn.headers
        content = conn.chunks[0] if len(conn.chunks) == 1 else b"".join(conn.chunks)
        if conn.keep_alive and conn.transport is not None:
            conn.idle_since = time.monotonic()
            self._idle.setdefault(key, deque()).append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        return conn.status, content, conn.headers

    def close(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                if conn.transport is not None:
                    conn.transport.close()
        self._idle.clear()
