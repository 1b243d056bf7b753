"""The lean HTTP/1.1 pool under `complete()` (llm/lean_http.py), on real sockets.

What the shared client tests (test_client*.py, test_targets.py) do not stage: compressed
answers and their bound, header values with CR/LF, the retry of a reused connection the server
dropped (and no retry once a byte came back), a body ended by the connection's end, a reply
that is not HTTP, TLS with the transport's own context, and the one connection limit a
tier's streams and calls share. Raw servers are `asyncio.start_server` handlers.
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
import subprocess
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import orjson
import pytest
from aiohttp import web

from callout_server.llm import LLMCallError, LLMClient, LLMConfig, LLMRequest, PoolLimits
from callout_server.llm.lean_http import LeanPool, Slots
from tests.fixtures.calllog import wait_until
from tests.fixtures.upstream import Upstream, sse_reply

REQ = LLMRequest(messages=[{"role": "user", "content": "好的"}], default_thinking=False)
ANSWER = orjson.dumps({"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}]})
CAP = 64 * 1024
WAIT_S = 10.0

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def cfg(base_url: str, tier: str = "nlu") -> LLMConfig:
    return LLMConfig(tier=tier, name=tier, base_url=base_url, model="m", api_key="sk-test",
                     timeout_s=5.0)


@pytest.fixture
async def client() -> AsyncIterator[LLMClient]:
    c = LLMClient(pools={"nlu": PoolLimits(max_connections=4, max_response_bytes=CAP),
                         "chat": PoolLimits(max_connections=1, max_response_bytes=CAP)})
    yield c
    await c.aclose()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return head + await reader.readexactly(length)


def response(body: bytes, *extra: bytes) -> bytes:
    return b"\r\n".join((b"HTTP/1.1 200 OK", b"content-type: application/json",
                         b"content-length: %d" % len(body), *extra, b"", body))


class Raw:
    """A raw server: `handler` per connection; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler, self.connections = handler, 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def serve(handler: Handler) -> tuple[asyncio.Server, Raw, str]:
    raw = Raw(handler)
    server = await asyncio.start_server(raw, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, raw, f"http://127.0.0.1:{port}/v1"


async def failure(call: Awaitable[object]) -> LLMCallError:
    with pytest.raises(LLMCallError) as info:
        await call
    return info.value


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_answer_is_inflated(client: LLMClient, encoding: str) -> None:
    packed = gzip.compress(ANSWER) if encoding == "gzip" else zlib.compress(ANSWER)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(response(packed, b"content-encoding: " + encoding.encode()))
        await writer.drain()
        await reader.read()

    server, _, url = await serve(handler)
    async with server:
        assert (await client.complete(cfg(url), REQ)).text == "pong"


async def test_a_compressed_answer_is_bounded_by_what_it_expands_to(client: LLMClient) -> None:
    bomb = gzip.compress(b" " * (64 * CAP))  # 4 MB of blanks in a few KB

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(response(bomb, b"content-encoding: gzip"))
        await writer.drain()
        await reader.read()

    server, _, url = await serve(handler)
    async with server:
        err = await failure(client.complete(cfg(url), REQ))
        assert err.code == "response_too_large"


async def test_an_unknown_encoding_is_an_upstream_error(client: LLMClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(response(b"\x00\x01", b"content-encoding: zstd"))
        await writer.drain()
        await reader.read()

    server, _, url = await serve(handler)
    async with server:
        assert (await failure(client.complete(cfg(url), REQ))).code == "upstream_error"


async def test_a_header_with_cr_or_lf_is_refused_before_sending() -> None:
    pool = LeanPool(Slots(1), ssl_context=None, guarded=True, keepalive_s=30.0)
    for value in ("a\r\nx-injected: 1", "a\nb", "a\rb"):
        with pytest.raises(ValueError) as info:
            await pool.post("http://127.0.0.1:9/v1", b"{}", {"x-a": value}, limit=CAP,
                            error_limit=CAP, connect_timeout_s=1.0)
        assert "injected" not in str(info.value)


async def test_a_reused_connection_dropped_by_the_server_is_retried_once(
        client: LLMClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(response(ANSWER))
        await writer.drain()
        await read_request(reader)  # the second request on this connection: dropped unanswered

    server, raw, url = await serve(handler)
    async with server:
        for _ in range(2):
            assert (await client.complete(cfg(url), REQ)).text == "pong"
        assert raw.connections == 2


async def test_no_retry_once_a_byte_of_the_answer_came_back(client: LLMClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"choi")
        await writer.drain()

    server, raw, url = await serve(handler)
    async with server:
        err = await failure(client.complete(cfg(url), REQ))
        assert (err.code, err.diagnostic.reason) == ("upstream_error", "server_closed")
        assert raw.connections == 1


async def test_a_body_ended_by_the_connection_is_read_whole(client: LLMClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + ANSWER)
        await writer.drain()

    server, _, url = await serve(handler)
    async with server:
        assert (await client.complete(cfg(url), REQ)).text == "pong"


async def test_a_reply_that_is_not_http_is_an_upstream_error(client: LLMClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        await writer.drain()
        await reader.read()

    server, _, url = await serve(handler)
    async with server:
        assert (await failure(client.complete(cfg(url), REQ))).code == "upstream_error"


async def test_a_stream_and_a_call_share_the_tiers_connection_limit(
        client: LLMClient, upstream: Upstream) -> None:
    # chat has one connection: while a stream holds it, a chat call waits for it.
    async def reply(request: web.Request) -> web.StreamResponse:
        if b'"stream":true' in (await request.read()).replace(b" ", b""):
            return await sse_reply([(0, b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'),
                                    (30.0, b"")])(request)
        return web.Response(body=ANSWER, content_type="application/json")

    upstream.reply = reply
    chat = cfg(upstream.base_url, tier="chat")
    lane = client._lane(chat)
    async with client.stream(chat, REQ) as stream:
        async for _ in stream:
            break  # the stream is open and holds the slot
        call = asyncio.ensure_future(client.complete(chat, REQ))
        await wait_until(lambda: bool(lane.slots._waiters), WAIT_S)
        assert not call.done()
    async with asyncio.timeout(WAIT_S):
        assert (await call).text == "pong"  # the stream's close gave the slot back


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    return cert, key


async def test_https_with_the_transports_tls_context(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(response(ANSWER))
        await writer.drain()
        await reader.read()

    server = await asyncio.start_server(Raw(handler), "127.0.0.1", 0, ssl=server_ctx)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    async with server:
        client = LLMClient()
        try:
            err = await failure(client.complete(cfg(url), REQ))  # not trusted: refused
            assert err.code == "connect_error"
            # Trusted by the transport's context, which the lean pool shares.
            client._default.transport.ssl_context.load_verify_locations(cert)
            assert (await client.complete(cfg(url), REQ)).text == "pong"
        finally:
            await client.aclose()
