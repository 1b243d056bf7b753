"""A chat client that stops reading is a slow consumer: its turn ends, nothing grows.

A real `serve` process streams a long answer from a scripted upstream to a client whose
socket is never read. What the turn holds for its reader is bounded by `[chat]
max_unread_bytes` (4 KB here, so the test is short): past it the turn ends `error` with the
code `slow_consumer`, and the upstream request is closed before the vendor has sent its
answer. The client that reads at last gets what was queued, then exactly one `end`.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import orjson

from callout_server.streams import StreamEvent
from callout_server.tiers.chat.outbox import Outbox
from tests.fixtures.database import SERVICE_HEADERS, SERVICE_TOKEN
from tests.fixtures.upstream import sse_reply
from tests.support.config_file import config_with

DELTA = "好的，我帮您查一下这个问题。" * 64  # ~2.7 KB of UTF-8 per chunk


def _chunk(text: str, finish: str | None = None) -> bytes:
    return b"data: " + orjson.dumps({"choices": [
        {"delta": {"content": text}, "finish_reason": finish}]}) + b"\n\n"


async def _post_and_stop_reading(port: int, path: str, body: dict[str, Any],
                                 language: str) -> tuple[asyncio.StreamReader, Any]:
    """A client with a small receive buffer that sends its request and reads nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    payload = orjson.dumps(body)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SERVICE_TOKEN}\r\n"
        f"Content-Type: application/json\r\nAccept-Language: {language}\r\n"
        f"Connection: close\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload)
    await writer.drain()
    return reader, writer


def _events(raw: bytes) -> list[dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    data, rest = b"", body
    while rest:  # chunked transfer encoding
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        data += rest[:size]
        rest = rest[size + 2:]
    return [orjson.loads(line[6:]) for line in data.split(b"\n") if line.startswith(b"data: ")]


async def test_a_reader_that_stops_reading_ends_its_turn_and_the_upstream_request(
        start_worker, upstream, tmp_path: Path) -> None:
    # 3,000 chunks (8 MB) sent as fast as the socket takes them: far more than fits.
    script = sse_reply([(0, _chunk(DELTA))] * 3000 + [(0, _chunk("。", "stop")),
                                                      (0, b"data: [DONE]\n\n")])
    upstream.reply = script
    config = config_with(tmp_path, {"chat": {"max_unread_bytes": 4096}})
    worker = await start_worker("slow", CALLOUT_CONFIG=str(config),
                                CALLOUT_CHAT_BASE_URL=upstream.base_url)
    port = int(worker.url.rsplit(":", 1)[1])
    async with httpx.AsyncClient(base_url=worker.url, timeout=30,
                                 headers=SERVICE_HEADERS) as http:
        for call_id in ("slow-zh", "slow-en"):
            r = await http.post("/api/chat/sessions", json={"call_id": call_id,
                                                            "system_prompt": "你是坐席"})
            assert r.status_code == 201, r.text
        ends = {}
        for call_id, language in (("slow-zh", "zh"), ("slow-en", "en")):
            script.disconnected.clear()
            reader, writer = await _post_and_stop_reading(
                port, f"/api/chat/sessions/{call_id}/turns",
                {"turn_id": "t1", "text": "你好", "output": "text"}, language)
            # The upstream request is closed while the vendor still has most to send.
            await asyncio.wait_for(script.disconnected.wait(), 30)
            assert not script.finished
            raw = await asyncio.wait_for(reader.read(-1), 30)  # now read it all
            writer.close()
            events = _events(raw)
            assert [e["event"] for e in events].count("end") == 1
            assert events[-1]["event"] == "end", events[-1]
            ends[language] = events[-1]
            sent = "".join(e["text"] for e in events if e["event"] == "text_delta")
            assert len(sent) < 1000 * len(DELTA)  # nowhere near the whole answer
        for end in ends.values():
            assert (end["reason"], end["error"]["code"]) == ("error", "slow_consumer"), end
        assert "max_unread_bytes" in ends["en"]["error"]["message"]
        assert "slowly" in ends["en"]["error"]["message"]
        assert "太慢" in ends["zh"]["error"]["message"]
        # The session is free again: the next turn is answered.
        upstream.reply = sse_reply([(0, _chunk("您好。", "stop")), (0, b"data: [DONE]\n\n")])
        async with http.stream("POST", "/api/chat/sessions/slow-zh/turns", json={
                "turn_id": "t2", "text": "在吗", "output": "text"}) as stream:
            lines = [line async for line in stream.aiter_lines() if line.startswith("data:")]
        assert orjson.loads(lines[-1][5:])["reason"] == "completed"


async def test_the_outbox_refuses_what_passes_its_bound_and_always_takes_the_end() -> None:
    box = Outbox(limit_bytes=10)
    assert box.put(StreamEvent("text_delta", {"text": "12345"}))
    assert box.put(StreamEvent("tool_call", {"name": "x", "arguments": {}}))  # counts nothing
    assert not box.put(StreamEvent("text_delta", {"text": "好好"}))  # 6 bytes: 11 > 10
    assert box.pending_bytes == 5
    box.close(StreamEvent("end", {"reason": "error"}))
    assert box.put(StreamEvent("text_delta", {"text": "late"}))  # closed: dropped silently
    names = []
    while (event := await box.get()) is not None:
        names.append(event.name)
    assert names == ["text_delta", "tool_call", "end"]
    assert box.pending_bytes == 0
