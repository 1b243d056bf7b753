"""A lean keep-alive HTTP/1.1 POST for `LLMClient.complete()`: an `asyncio.Protocol` with
httptools' response parser, about a third of the CPU an aiohttp POST costs (bench/README.md).

Plain-JSON, non-streamed POSTs only (streams stay on httpx over aiohttp). What it keeps of the
aiohttp session it replaces, so that `transport.describe_transport_error` and the tests read
its failures the same way:

- the target policy at connection time: the name is resolved here (`getaddrinfo`), refused with
  `targets.RefusedAddress` when any address is a cloud-metadata or link-local one (`guarded`),
  and the connection goes to the checked addresses only;
- failures as aiohttp's own classes (subclasses where aiohttp's need its internals): a failed
  connect or TLS handshake -> `ClientConnectorError` / `ClientConnectorSSLError` /
  `ClientConnectorCertificateError` (host, port, the system's reason); the connect past its
  bound -> `ConnectionTimeoutError`; the server hanging up -> `ServerDisconnectedError`; a
  reset -> `ClientOSError`; an answer the parser refuses -> `MalformedResponse`;
- the size bound: a declared length past `limit` is refused before a byte is read, a chunked
  or compressed (gzip, deflate: inflated with the bound on what they expand to) answer counted
  as it arrives, then the connection closed unread (`body` None); an error status (>= 300)
  keeps up to `error_limit` bytes, `Retry-After` returned;
- one connection limit per lane: `slots` is shared with the lane's streams (lane.py);
- header names and values with CR, LF or NUL refused (`ValueError`, as aiohttp does), no
  redirect followed, no proxy from the environment;
- keep-alive (LIFO idle connections per origin, closed after `keepalive_s` idle), a reused
  connection that ends before any byte of the answer retried once on a new one, never after
  one; a cancelled or failed exchange closes its connection.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
import zlib
from collections import deque
from typing import NamedTuple

import aiohttp
import httptools
from yarl import URL

from callout_server.llm.targets import RefusedAddress, refused_among

Origin = tuple[str, str, int]  # scheme, host (IDNA), port


class _Key(NamedTuple):  # what aiohttp's connector exceptions read of their connection key
    host: str
    port: int
    ssl: object
    is_ssl: bool


class ServerClosed(aiohttp.ServerDisconnectedError):
    """The connection ended before the whole answer (`untouched`: before any byte of it)."""

    def __init__(self, untouched: bool) -> None:
        super().__init__()
        self.untouched = untouched


class MalformedResponse(aiohttp.ClientError):
    """The answer is not HTTP/1.1 the parser accepts, or its encoding cannot be read."""


class Slots:
    """A counting limit that belongs to no event loop (each wait is a future on the running
    one): the lane's connections, shared by the lean pool and the streams."""

    __slots__ = ("_free", "_waiters")

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # a release hands its slot straight to this waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot while being cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class _Conn(asyncio.Protocol):
    __slots__ = ("chunks", "complete", "cut", "error_limit", "got_bytes", "headers",
                 "headers_done", "idle_since", "inflate", "keep_alive", "limit", "loop",
                 "parser", "size", "status", "transport", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.idle_since = 0.0
        self.reset(0, 0)

    def reset(self, limit: int, error_limit: int) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.limit, self.error_limit = limit, error_limit
        self.chunks: list[bytes] = []
        self.size = self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.inflate: zlib._Decompress | None = None
        self.keep_alive = True
        self.got_bytes = self.headers_done = self.complete = self.cut = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.waiter is None or self.complete:  # bytes nobody asked for: never reused
            self.keep_alive = False
            if self.transport is not None:
                self.transport.close()
            return
        self.got_bytes = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            inner = exc.__context__  # a callback's own refusal, wrapped by the parser
            self._fail(inner if isinstance(inner, MalformedResponse)
                       else MalformedResponse(f"malformed HTTP response: {exc}"))
        except MalformedResponse as exc:
            self._fail(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.keep_alive = False
        if self.complete or self.waiter is None:
            return
        if exc is None and self.headers_done and not self._framed():
            self._finish()  # a body delimited by the end of the connection
        elif isinstance(exc, OSError) and exc.errno:
            self._fail(aiohttp.ClientOSError(exc.errno, exc.strerror or str(exc)))
        else:
            self._fail(ServerClosed(not self.got_bytes))

    # -- httptools callbacks
    # A second message in the same read (bytes past the answer) is ignored, the connection
    # not reused (`_finish` is final).
    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.complete:
            self.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        if self.complete:
            self.keep_alive = False
            return
        self.headers_done = True
        self.status = self.parser.get_status_code()
        encoding = self.headers.get(b"content-encoding", b"identity").strip().lower()
        if encoding in (b"gzip", b"x-gzip"):
            self.inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == b"deflate":
            self.inflate = zlib.decompressobj()
        elif encoding != b"identity":
            raise MalformedResponse(f"unsupported content-encoding {encoding[:40]!r}")
        if self.status >= 300:
            self.limit = self.error_limit  # an excerpt is all a diagnostic shows
            return
        declared = self.headers.get(b"content-length")
        if self.inflate is None and declared is not None and declared.isdigit() \
                and int(declared) > self.limit:
            self._cut()

    def on_body(self, body: bytes) -> None:
        if self.cut or self.complete:
            return
        if self.inflate is not None:
            try:
                body = self.inflate.decompress(body, self.limit - self.size + 1)
            except zlib.error as exc:
                raise MalformedResponse(f"undecodable body: {exc}") from None
        self._take(body)

    def _take(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > self.limit:
            self.chunks.append(body[: len(body) - (self.size - self.limit)])
            self._cut()
            return
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if not self.complete:
            self.keep_alive = self.parser.should_keep_alive()
            self._finish()

    # --
    def _framed(self) -> bool:
        return b"content-length" in self.headers or b"chunked" in self.headers.get(
            b"transfer-encoding", b"").lower()

    def _finish(self) -> None:
        self.complete = True
        if self.inflate is not None and not self.cut:
            # Not cut, so every decompress() took all its input: what flush() holds is bounded.
            self._take(self.inflate.flush())
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def _cut(self) -> None:
        self.cut = True
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()  # the rest is never read
        self._finish()

    def _fail(self, exc: BaseException) -> None:
        self.complete = True
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)


def _checked_header(text: str) -> str:
    if "\r" in text or "\n" in text or "\0" in text:
        raise ValueError("newline or NUL character in a header")  # text never quoted
    return text


class LeanPool:
    """Idle connections per origin on the running loop, at most `slots` requests at once."""

    def __init__(self, slots: Slots, *, ssl_context: ssl.SSLContext | None,
                 guarded: bool, keepalive_s: float) -> None:
        self._slots = slots
        self._ssl = ssl_context
        self._guarded = guarded
        self._keepalive_s = keepalive_s
        self._idle: dict[Origin, deque[_Conn]] = {}
        self._targets: dict[str, tuple[Origin, bytes]] = {}

    @staticmethod
    def handles(url: str) -> bool:
        """http(s) URLs without credentials in them (anything else takes aiohttp's path)."""
        try:
            parsed = URL(url)
        except (ValueError, TypeError):
            return False
        return parsed.scheme in ("http", "https") and bool(parsed.raw_host) \
            and parsed.raw_user is None and parsed.raw_password is None

    def _target(self, url: str) -> tuple[Origin, bytes]:
        hit = self._targets.get(url)
        if hit is None:
            parsed = URL(url)
            host = parsed.raw_host or ""
            port = parsed.port or (443 if parsed.scheme == "https" else 80)
            name = f"[{host}]" if ":" in host else host
            if parsed.explicit_port is not None:
                name = f"{name}:{parsed.explicit_port}"
            path = _checked_header(parsed.raw_path_qs or "/")
            head = f"POST {path} HTTP/1.1\r\nhost: {_checked_header(name)}\r\n".encode("ascii")
            hit = ((parsed.scheme, host, port), head)
            if len(self._targets) < 1024:
                self._targets[url] = hit
        return hit

    async def post(self, url: str, body: bytes, headers: dict[str, str], *, limit: int,
                   error_limit: int, connect_timeout_s: float
                   ) -> tuple[int, bytes | None, str | None]:
        """(status, body, Retry-After): `body` None when a success passed `limit`."""
        origin, head = self._target(url)
        lines = "".join(f"{_checked_header(k)}: {_checked_header(v)}\r\n"
                        for k, v in headers.items())
        request = b"".join((head, lines.encode("latin-1"), b"content-length: ",
                            str(len(body)).encode(), b"\r\n\r\n", body))
        async with self._slots:
            for attempt in range(2):
                conn = self._checkout(origin) if attempt == 0 else None
                reused = conn is not None
                if conn is None:
                    conn = await self._connect(origin, connect_timeout_s)
                try:
                    return await self._exchange(conn, origin, request, limit, error_limit)
                except ServerClosed as exc:
                    if not (reused and exc.untouched):
                        raise
            raise AssertionError("unreachable")  # pragma: no cover

    def _checkout(self, origin: Origin) -> _Conn | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now, loop = time.monotonic(), asyncio.get_running_loop()
        while idle:
            conn = idle.pop()
            transport = conn.transport
            if transport is None or transport.is_closing():
                continue
            if conn.loop is loop and now - conn.idle_since < self._keepalive_s:
                return conn
            if conn.loop is loop or not conn.loop.is_closed():
                transport.close()
        return None

    async def _connect(self, origin: Origin, timeout_s: float) -> _Conn:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        ctx = (self._ssl or ssl.create_default_context()) if scheme == "https" else None
        key = _Key(host, port, ctx if ctx is not None else True, ctx is not None)
        try:
            async with asyncio.timeout(timeout_s):
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                if self._guarded:
                    refusal = refused_among(host.rstrip(".").lower(),
                                            [str(info[4][0]) for info in infos])
                    if refusal is not None:
                        raise RefusedAddress(refusal)
                return await self._open(loop, infos, key, ctx)
        except TimeoutError as exc:
            raise aiohttp.ConnectionTimeoutError(
                f"Connection timeout to host {scheme}://{host}:{port}") from exc
        except (RefusedAddress, aiohttp.ClientError):
            raise
        except OSError as exc:  # the name does not resolve
            raise aiohttp.ClientConnectorError(key, exc) from exc  # type: ignore[arg-type]

    async def _open(self, loop: asyncio.AbstractEventLoop, infos: list, key: _Key,
                    ctx: ssl.SSLContext | None) -> _Conn:
        last: OSError | None = None
        for family, _, proto, _, address in infos:
            try:
                _, conn = await loop.create_connection(
                    lambda: _Conn(loop), address[0], address[1], family=family, proto=proto,
                    ssl=ctx, server_hostname=key.host if ctx is not None else None)
            except ssl.SSLCertVerificationError as exc:
                raise aiohttp.ClientConnectorCertificateError(key, exc) from exc  # type: ignore[arg-type]
            except ssl.SSLError as exc:
                raise aiohttp.ClientConnectorSSLError(key, exc) from exc  # type: ignore[arg-type]
            except OSError as exc:
                last = exc
                continue
            return conn  # asyncio sets TCP_NODELAY on TCP transports
        assert last is not None
        raise aiohttp.ClientConnectorError(key, last) from last  # type: ignore[arg-type]

    async def _exchange(self, conn: _Conn, origin: Origin, request: bytes, limit: int,
                        error_limit: int) -> tuple[int, bytes | None, str | None]:
        conn.reset(limit, error_limit)
        waiter = conn.waiter = conn.loop.create_future()
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
        chunks = conn.chunks
        content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        retry_after = conn.headers.get(b"retry-after")
        if conn.keep_alive and conn.transport is not None:
            conn.idle_since = time.monotonic()
            self._idle.setdefault(origin, deque()).append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        if conn.cut and conn.status < 300:
            return conn.status, None, None
        return (conn.status, content,
                retry_after.decode("latin-1") if retry_after is not None else None)

    def close(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                if conn.transport is not None and not conn.loop.is_closed():
                    conn.transport.close()
        self._idle.clear()
