"""SIGTERM ends every open stream at once and the worker exits in bounded time.

A real `serve` process with `[server] shutdown_grace_s = 2` holds three chat turns and a
script stream whose model is still talking, two chat clients and the script client reading,
one chat client that never reads (its socket full, the server's write blocked). At SIGTERM:
each reading client gets exactly one `end`, reason `cancelled`, at once; every upstream
request is closed; the call log has a record for each call; and the process is gone within
the grace plus the call log's flush, whatever the non-reader does.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
from aiohttp import web

from callout_server.db.engine import Database
from tests.fixtures.calllog import stored, wait_until
from tests.fixtures.database import SERVICE_HEADERS, SERVICE_TOKEN
from tests.support.config_file import config_with

GRACE_S = 2
FLOOD = "好的，我帮您查一下这个问题。" * 64  # ~2.7 KB of UTF-8 per chunk


def _chunk(text: str) -> bytes:
    return b"data: " + orjson.dumps({"choices": [
        {"delta": {"content": text}, "finish_reason": None}]}) + b"\n\n"


class Vendor:
    """A model that talks for ever: a trickle, or 8 MB at once (for the non-reader) and
    then a trickle; it notes each request it serves and each the client closed."""

    def __init__(self) -> None:
        self.serving = 0
        self.closed = 0
        self.flooded = asyncio.Event()

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        self.serving += 1
        try:
            if b"flood" in body:
                for _ in range(3000):
                    await response.write(_chunk(FLOOD))
                self.flooded.set()
            while True:
                await response.write(_chunk("嗯，"))
                await asyncio.sleep(0.2)
        except (ConnectionError, asyncio.CancelledError):
            self.closed += 1
            raise


async def _rest(lines: Any) -> list[dict[str, Any]]:
    return [orjson.loads(line[5:]) async for line in lines if line.startswith("data:")]


async def sigterm_and_read(proc: Any, readers: list[Any]) -> tuple[float, float]:
    """SIGTERM to `proc`, each stream read to its end: each ends with its one `end`, reason
    `cancelled`. Returns (when it was signalled, how long until every stream had ended)."""
    proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    rests = await asyncio.wait_for(asyncio.gather(*(_rest(lines) for lines in readers)), 5)
    ended_after = time.monotonic() - signalled
    for events in rests:
        ends = [e for e in events if e["event"] == "end"]
        assert len(ends) == 1 and events[-1] is ends[0], events[-3:]
        assert ends[0]["reason"] == "cancelled" and ends[0]["error"] is None, ends[0]
    return signalled, ended_after


async def test_sigterm_ends_every_stream_cancelled_and_exits_within_the_grace(
        start_worker, upstream, pg_url: str, tmp_path: Path) -> None:
    vendor = Vendor()
    upstream.reply = vendor
    # Room for the whole flood: the non-reader stays open (not a slow consumer).
    config = config_with(tmp_path, {"chat": {"max_unread_bytes": 32 * 1024 * 1024}})
    worker = await start_worker(
        "shutdown", CALLOUT_CONFIG=str(config), CALLOUT_SHUTDOWN_GRACE_S=str(GRACE_S),
        CALLOUT_CHAT_BASE_URL=upstream.base_url, CALLOUT_SCRIPT_BASE_URL=upstream.base_url)
    port = int(worker.url.rsplit(":", 1)[1])
    async with httpx.AsyncClient(base_url=worker.url, timeout=30,
                                 headers=SERVICE_HEADERS) as http:
        for call_id in ("r1", "r2", "deaf"):
            r = await http.post("/api/chat/sessions", json={"call_id": call_id,
                                                            "system_prompt": "你是坐席"})
            assert r.status_code == 201, r.text
        # The client that never reads: a small receive buffer, its request, then nothing.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        _, deaf = await asyncio.open_connection(sock=sock)
        payload = orjson.dumps({"turn_id": "t1", "text": "flood", "output": "text"})
        deaf.write(f"POST /api/chat/sessions/deaf/turns HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {SERVICE_TOKEN}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
        await deaf.drain()
        await asyncio.wait_for(vendor.flooded.wait(), 30)

        async with http.stream("POST", "/api/chat/sessions/r1/turns", json={
                "turn_id": "t1", "text": "你好", "output": "text"}) as s1, \
            http.stream("POST", "/api/chat/sessions/r2/turns", json={
                "turn_id": "t1", "text": "你好", "output": "audio"}) as s2, \
            http.stream("POST", "/api/scripts/generate", json={
                "brief": "提醒客户还款", "stream": True, "save": False}) as s3:
            readers = [s.aiter_lines() for s in (s1, s2, s3)]
            await wait_until(lambda: vendor.serving == 4)  # every model is talking
            signalled, ended_after = await sigterm_and_read(worker.proc, readers)
        assert ended_after < 1.5, ended_after  # at once, not after the grace
        code = await asyncio.to_thread(worker.proc.wait, GRACE_S + 10)
        exited_after = time.monotonic() - signalled
        deaf.close()
    assert code == -signal.SIGTERM
    assert exited_after < GRACE_S + 6, exited_after
    assert vendor.closed == 4  # every upstream request was closed
    db = Database(pg_url)
    try:
        records = await stored(db)
    finally:
        await db.dispose()
    chat = {r.call_id: r.code for r in records if r.tier == "chat"}
    assert chat == {"r1": "cancelled", "r2": "cancelled", "deaf": "cancelled"}, chat
    assert [r.code for r in records if r.tier == "script"] == ["cancelled"]
