"""What a connection may cost a worker: idle, trickling and surplus sockets are let go.

A real `callout-server serve` process (uvicorn, as operators run it) with short limits set
in its configuration (1 s idle, 1 s for headers, 1 s for a body, 60 connections): sockets
that say nothing, or trickle headers or a body, are closed within the limit plus slack; the
worker keeps answering /healthz while many sockets idle; connections past the ceiling get
the contract's 503 at once; a reply streamed for longer than all the limits is never cut.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import orjson

from tests.fixtures.database import SERVICE_HEADERS
from tests.fixtures.upstream import sse_reply

# What a loaded machine may add to a 1 s limit before the socket is seen closed.
SLACK_S = 3.0
LIMITS = {"CALLOUT_KEEPALIVE_TIMEOUT_S": "1", "CALLOUT_HEADER_TIMEOUT_S": "1",
          "CALLOUT_BODY_TIMEOUT_S": "1", "CALLOUT_MAX_CONNECTIONS": "60"}
NODE = {"utterance": "好的", "intents": [{"name": "agree"}, {"name": "refuse"}],
        "fallback_intent": "agree"}


async def _connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def _until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    async with asyncio.timeout(1 + SLACK_S):
        while chunk := await reader.read(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _error(raw: bytes) -> tuple[int, dict[str, str], dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, orjson.loads(body)


async def test_idle_and_trickling_sockets_are_closed_and_health_still_answers(
        start_worker, emulator) -> None:
    worker = await start_worker("limits", **LIMITS,
                                CALLOUT_NLU_BASE_URL=emulator.base_url("vllm"))
    port = worker.port
    loop = asyncio.get_running_loop()
    async with httpx.AsyncClient(base_url=worker.url, timeout=5) as http:
        # 40 sockets that never send a byte: /healthz (a new connection) still answers.
        idle = [await _connect(port) for _ in range(40)]
        opened = loop.time()
        r = await http.get("/healthz")
        assert r.status_code == 200, r.text
        for reader, _ in idle:
            assert await _until_closed(reader) == b""  # closed, nothing said
        assert loop.time() - opened < 1 + SLACK_S

        # Headers trickled a line at a time: 408 at the header limit, then closed.
        reader, writer = await _connect(port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        started = loop.time()

        async def trickle(data: bytes) -> None:
            try:
                for _ in range(50):
                    await asyncio.sleep(0.2)
                    writer.write(data)
                    await writer.drain()
            except OSError:
                pass  # the server closed it: what the test waits for

        feeding = asyncio.ensure_future(trickle(b"X-Slow: 1\r\n"))
        status, headers, body = _error(await _until_closed(reader))
        feeding.cancel()
        assert (status, body["error"]["code"]) == (408, "request_timeout")
        assert headers["connection"] == "close" and loop.time() - started < 1 + SLACK_S

        # A body trickled ten bytes at a time: 408 at the body limit, then closed.
        reader, writer = await _connect(port)
        writer.write(b"POST /api/nlu/decide HTTP/1.1\r\nHost: t\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 4000\r\nAuthorization: "
                     + SERVICE_HEADERS["Authorization"].encode() + b"\r\n\r\n{")
        started = loop.time()
        feeding = asyncio.ensure_future(trickle(b" " * 10))
        status, headers, body = _error(await _until_closed(reader))
        feeding.cancel()
        assert (status, body["error"]["code"]) == (408, "request_timeout")
        assert "1s" in body["error"]["message"] or "1 秒" in body["error"]["message"]
        assert loop.time() - started < 1 + SLACK_S

        # After a response, an idle keep-alive connection fed line ends only is let go.
        reader, writer = await _connect(port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        feeding = asyncio.ensure_future(trickle(b"\r\n"))
        rest = await _until_closed(reader)
        feeding.cancel()
        assert b"HTTP/1.1 200" not in rest  # no second answer: closed (or a 408 for it)

        # The second request of a connection, trickling its headers: 408 as well.
        reader, writer = await _connect(port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        head = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
        length = int(head.split("content-length: ", 1)[1].split("\r\n", 1)[0])
        await reader.readexactly(length)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        started = loop.time()
        feeding = asyncio.ensure_future(trickle(b"X-Slow: 1\r\n"))
        status, _, body = _error(await _until_closed(reader))
        feeding.cancel()
        assert (status, body["error"]["code"]) == (408, "request_timeout")
        assert loop.time() - started < 1 + SLACK_S

        # The worker is whole: a decision is served as before.
        r = await http.post("/api/nlu/decide", headers=SERVICE_HEADERS, json=NODE)
        assert r.status_code == 200, r.text


async def test_connections_past_the_ceiling_get_503_at_once(start_worker) -> None:
    worker = await start_worker("ceiling", **LIMITS)
    held = [await _connect(worker.port) for _ in range(70)]

    async def first_words(reader: asyncio.StreamReader) -> bytes | None:
        try:
            async with asyncio.timeout(0.5):  # a refusal comes at once, before the idle limit
                return await reader.read(65536)
        except TimeoutError:
            return None  # within the ceiling: held until the idle limit

    answers = await asyncio.gather(*(first_words(reader) for reader, _ in held))
    refused = [a for a in answers if a]
    assert len(refused) == 10, [a[:40] if a else a for a in answers]
    for raw in refused:
        status, headers, body = _error(raw)
        assert (status, body["error"]["code"]) == (503, "too_many_connections")
        assert headers["retry-after"] == "1" and headers["connection"] == "close"
    for reader, _ in held:  # the idle limit frees the others
        await _until_closed(reader)
    async with httpx.AsyncClient(timeout=5) as http:
        assert (await http.get(f"{worker.url}/healthz")).status_code == 200


async def test_a_reply_streamed_for_longer_than_every_limit_is_not_cut(
        start_worker, upstream) -> None:
    # 30 deltas 0.1 s apart from a scripted upstream: 3 s of streaming, past the 1 s limits.
    def chunk(text: str, finish: str | None = None) -> bytes:
        return b"data: " + orjson.dumps({"choices": [
            {"delta": {"content": text}, "finish_reason": finish}]}) + b"\n\n"

    upstream.reply = sse_reply([(0.1, chunk("好的，")) for _ in range(30)]
                               + [(0, chunk("。", "stop")), (0, b"data: [DONE]\n\n")])
    worker = await start_worker("stream", **LIMITS, CALLOUT_CHAT_BASE_URL=upstream.base_url)
    async with httpx.AsyncClient(base_url=worker.url, timeout=30,
                                 headers=SERVICE_HEADERS) as http:
        r = await http.post("/api/chat/sessions", json={"call_id": "long-1",
                                                        "system_prompt": "你是坐席"})
        assert r.status_code == 201, r.text
        started = time.monotonic()
        async with http.stream("POST", "/api/chat/sessions/long-1/turns", json={
                "turn_id": "t1", "revision": 0, "text": "你好", "output": "text"}) as stream:
            lines = [line async for line in stream.aiter_lines() if line.startswith("data:")]
        assert time.monotonic() - started > 2.5
        end = orjson.loads(lines[-1][5:])
        assert (end["event"], end["reason"]) == ("end", "completed"), lines[-3:]
