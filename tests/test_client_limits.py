"""The client's pools and their bounds: one pool per tier, and no answer read past its size.

An upstream that answers 64 MB (declared, chunked, streamed, or as an error page) is cut off
at the pool's `max_response_bytes`: the call fails with `response_too_large` and the
connection is closed, so the server's writes fail long before it has sent its body. Run
against a real local server (tests/fixtures/upstream.py), as production calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from callout_server.llm import LLMCallError, LLMClient, LLMConfig, LLMRequest, PoolLimits
from tests.fixtures.upstream import Upstream, json_reply

REQ = LLMRequest(messages=[{"role": "user", "content": "好的"}], default_thinking=False)
CAP = 256 * 1024
HUGE = 64 * 1024 * 1024  # what the server means to send
PIECE = 64 * 1024
WAIT_S = 10.0


def cfg(upstream: Upstream, tier: str = "nlu", **kw: Any) -> LLMConfig:
    return LLMConfig(tier=tier, name=tier, base_url=upstream.base_url, model="qwen3-8b",
                     timeout_s=20.0, **kw)


@pytest.fixture
async def client() -> AsyncIterator[LLMClient]:
    c = LLMClient(pools={"nlu": PoolLimits(max_connections=4, max_response_bytes=CAP),
                         "chat": PoolLimits(max_connections=2, max_response_bytes=CAP)})
    yield c
    await c.aclose()


class Flood:
    """A reply that writes `total` bytes in pieces and counts what it got written."""

    def __init__(self, *, status: int = 200, declared: bool = False,
                 content_type: str = "application/json", head: bytes = b"",
                 filler: bytes = b" ") -> None:
        self.status, self.declared, self.content_type, self.head = (
            status, declared, content_type, head)
        self.piece = filler * (PIECE // len(filler))
        self.written = 0
        self.cut = asyncio.Event()  # the client closed the connection before the end

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        headers = {"content-type": self.content_type}
        if self.declared:
            headers["content-length"] = str(HUGE)
        response = web.StreamResponse(status=self.status, headers=headers)
        await response.prepare(request)
        try:
            if self.head:
                await response.write(self.head)
                self.written += len(self.head)
            while self.written < HUGE:
                await response.write(self.piece)
                self.written += len(self.piece)
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            self.cut.set()
            raise
        return response


async def failure(call: Any) -> LLMCallError:
    with pytest.raises(LLMCallError) as info:
        await call
    return info.value


def assert_cut_early(flood: Flood) -> None:
    # Socket buffers hold a few MB between the two ends; the body was 64 MB.
    assert flood.written < HUGE // 4, flood.written


@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "content-length"])
async def test_complete_refuses_an_answer_past_the_cap(client: LLMClient, upstream: Upstream,
                                                       declared: bool) -> None:
    flood = upstream.reply = Flood(declared=declared, head=b'{"choices": [')
    err = await failure(client.complete(cfg(upstream), REQ))
    d = err.diagnostic
    assert (d.code, d.status, d.reason, dict(d.args or {})) == (
        "response_too_large", 200, "response_limit", {"limit": CAP})
    assert not err.retryable and not err.endpoint_fault  # the same request would do it again
    assert f"more than {CAP} bytes" in d.message_in("en")
    assert "max_response_bytes" in d.advice_in("en") and "max_response_bytes" in d.advice_in("zh")
    await asyncio.wait_for(flood.cut.wait(), WAIT_S)
    assert_cut_early(flood)


async def test_an_answer_within_the_cap_is_read(client: LLMClient, upstream: Upstream) -> None:
    text = "好" * 20_000  # 60 KB of text, escaped: over 100 KB of body
    upstream.reply = json_reply({"choices": [{"message": {"content": text},
                                              "finish_reason": "stop"}]})
    assert (await client.complete(cfg(upstream), REQ)).text == text


async def test_an_error_page_is_kept_as_an_excerpt_not_read_whole(
        client: LLMClient, upstream: Upstream) -> None:
    flood = upstream.reply = Flood(status=502, content_type="text/html", head=b"Bad gateway ")
    err = await failure(client.complete(cfg(upstream), REQ))
    assert (err.diagnostic.code, err.diagnostic.status) == ("upstream_error", 502)
    assert err.diagnostic.detail == "Bad gateway"
    await asyncio.wait_for(flood.cut.wait(), WAIT_S)
    assert_cut_early(flood)


async def test_stream_is_cut_at_the_cap(client: LLMClient, upstream: Upstream) -> None:
    chunk = orjson.dumps({"choices": [{"delta": {"content": "好"}, "finish_reason": None}]})
    event = b"data: " + chunk + b"\n\n"
    # Deltas, then keep-alive comments forever.
    flood = upstream.reply = Flood(content_type="text/event-stream",
                                   head=event * (PIECE // len(event)), filler=b": keep-alive\n")
    received = 0
    with pytest.raises(LLMCallError) as info:
        async with client.stream(cfg(upstream, tier="chat"), REQ) as stream:
            async for _ in stream:
                received += 1
    assert info.value.diagnostic.code == "response_too_large"
    assert received > 100  # what came within the cap was handed over
    await asyncio.wait_for(flood.cut.wait(), WAIT_S)
    assert_cut_early(flood)


async def test_a_label_without_a_pool_uses_the_default(upstream: Upstream) -> None:
    client = LLMClient(default_pool=PoolLimits(max_response_bytes=CAP))
    try:
        flood = upstream.reply = Flood(head=b"{")
        err = await failure(client.complete(cfg(upstream, tier="script"), REQ))
        assert err.diagnostic.code == "response_too_large"
        await asyncio.wait_for(flood.cut.wait(), WAIT_S)
    finally:
        await client.aclose()


async def test_a_burst_on_one_tier_leaves_the_other_its_connections(
        client: LLMClient, upstream: Upstream) -> None:
    # chat holds its 2 connections with answers that never come; NLU still answers at once.
    gate, both_taken = asyncio.Event(), asyncio.Event()
    chat_seen = 0
    ok = json_reply({"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]})

    async def reply(request: web.Request) -> web.StreamResponse:
        nonlocal chat_seen
        if b'"chat"' in await request.read():
            chat_seen += 1
            if chat_seen == 2:
                both_taken.set()
            await gate.wait()
        return await ok(request)

    upstream.reply = reply
    chat_req = LLMRequest(messages=[{"role": "user", "content": "chat"}], default_thinking=False)
    burst = [asyncio.ensure_future(client.complete(cfg(upstream, tier="chat"), chat_req))
             for _ in range(6)]
    try:
        await asyncio.wait_for(both_taken.wait(), WAIT_S)
        async with asyncio.timeout(2.0):
            done = await asyncio.gather(*(client.complete(cfg(upstream), REQ) for _ in range(4)))
        assert [c.text for c in done] == ["{}"] * 4
        assert chat_seen == 2  # the other four chat calls still wait for a chat connection
    finally:
        gate.set()
        await asyncio.gather(*burst, return_exceptions=True)
    assert client.limits(cfg(upstream, tier="chat")).max_connections == 2


async def test_a_stream_line_without_its_newline_is_cut_at_the_line_bound(
        upstream: Upstream) -> None:
    from callout_server.llm.sse import MAX_LINE_BYTES

    # A body cap far above the line bound: the line bound (4 MB) fires first.
    client = LLMClient(pools={"chat": PoolLimits(max_response_bytes=HUGE * 2)})
    flood = upstream.reply = Flood(content_type="text/event-stream", head=b"data: ",
                                   filler=b"x")
    loop = asyncio.get_running_loop()
    lag = 0.0

    async def ticker() -> None:  # what every other call on this worker would feel
        nonlocal lag
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            lag = max(lag, loop.time() - before - 0.005)

    ticking = asyncio.ensure_future(ticker())
    try:
        with pytest.raises(LLMCallError) as info:
            async with client.stream(cfg(upstream, tier="chat"), REQ) as stream:
                async for _ in stream:
                    pass
    finally:
        ticking.cancel()
        await client.aclose()
    d = info.value.diagnostic
    assert (d.code, d.reason, dict(d.args or {})) == (
        "response_too_large", "line_limit", {"limit": MAX_LINE_BYTES})
    assert "line longer than" in d.message_in("en")
    await asyncio.wait_for(flood.cut.wait(), WAIT_S)
    assert_cut_early(flood)
    assert lag < 0.5, lag  # the pending line cost no long stall (it cost seconds)
