"""LLMClient as production builds it, against a real local server: request shape, error
translation, timeouts, secrecy, streams and barge-in.

`complete()` is the NLU hot path (a POST on the lane's lean pool, llm/lean_http.py);
`stream()` goes through httpx on the lane's aiohttp transport. Both are exercised on a real socket
(tests/fixtures/upstream.py), so the exceptions translated here are the ones production sees.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
import orjson
import pytest

from callout_server.llm import (
    Finish,
    LLMCallError,
    LLMClient,
    LLMConfig,
    LLMRequest,
    TextDelta,
    Usage,
)
from callout_server.llm.transport import describe_transport_error
from tests.fixtures.app import free_port
from tests.fixtures.upstream import (
    Upstream,
    hang_up,
    json_reply,
    slow_reply,
    sse_reply,
    status_reply,
)

KEY = "sk-live-4f9a1c2b3d4e5f60718293a4b5c6d7e8"
# Thinking off unless the configuration says otherwise, as the NLU tier asks.
REQ = LLMRequest(messages=[{"role": "user", "content": "明天下午三点以后都可以"}],
                 default_thinking=False)
# Conditions are awaited, never slept for; this only bounds a test that would hang.
WAIT_S = 10.0


@pytest.fixture
async def client() -> AsyncIterator[LLMClient]:
    c = LLMClient()
    yield c
    await c.aclose()


def cfg(upstream: Upstream | str, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {
        "tier": "t",
        "name": "t",
        "base_url": upstream if isinstance(upstream, str) else upstream.base_url,
        "model": "qwen3-8b",
        "api_key": KEY,
        "timeout_s": 5.0,
    }
    return LLMConfig(**{**base, **kw})


def chat_body(
    content: Any = '{"intent": "agree"}', finish: str | None = "stop", **msg: Any
) -> dict:
    return {
        "choices": [
            {"message": {"role": "assistant", "content": content, **msg}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 5},
    }


def assert_secret_free(err: BaseException) -> None:
    rendered = "".join(traceback.format_exception(err))
    assert KEY not in rendered and KEY not in repr(err) and KEY not in str(err)
    assert KEY not in repr(err.diagnostic.to_dict())  # type: ignore[attr-defined]


async def failure(call: Any) -> LLMCallError:
    with pytest.raises(LLMCallError) as info:
        await call
    return info.value


# -- complete() ----------------------------------------------------------------------------


async def test_complete_sends_bearer_and_orjson_body(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply(chat_body())
    result = await client.complete(cfg(upstream), REQ)
    assert result.text == '{"intent": "agree"}' and result.finish_reason == "stop"
    assert result.usage == Usage(7, 5, None) and result.diagnostic is None
    assert result.dialect == "selfhosted"
    assert result.thinking is False and result.max_tokens == 300 and result.latency_ms > 0
    (seen,) = upstream.requests
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    body = seen.json()
    assert body["model"] == "qwen3-8b" and body["stream"] is False
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert KEY not in repr(client) and KEY not in repr(cfg(upstream))


async def test_connection_is_reused(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply(chat_body())
    for _ in range(3):
        await client.complete(cfg(upstream), REQ)
    # One pooled connection: the server sees the same client port every time.
    assert len(upstream.requests) == 3
    assert len({s.peer for s in upstream.requests}) == 1


async def test_no_authorization_header_without_key(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply(chat_body())
    await client.complete(cfg(upstream, api_key=""), REQ)
    assert "authorization" not in upstream.requests[0].headers


async def test_reasoning_is_never_in_text(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply(chat_body("<think>嗯</think>好的", reasoning="先想"))
    result = await client.complete(cfg(upstream), REQ)
    assert result.text == "好的" and "嗯" in result.reasoning and "先想" in result.reasoning


@pytest.mark.parametrize(
    ("status", "error_body", "vendor_message"),
    [
        (
            429,
            {
                "error": {
                    "message": "Rate limit reached for requests",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
            "Rate limit reached for requests",
        ),
        (
            400,
            {
                "code": "InvalidParameter",
                "message": "parameter.enable_thinking must be set to false for non-streaming calls",
            },
            "parameter.enable_thinking must be set to false",
        ),
        (
            400,
            {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError"},
            "max_tokens is too large",
        ),
        (404, {"detail": "Not Found"}, "Not Found"),
        (502, None, "Bad gateway"),
    ],
)
async def test_http_errors_become_upstream_error(
    client: LLMClient, upstream: Upstream, status: int, error_body: dict | None,
    vendor_message: str,
) -> None:
    upstream.reply = (status_reply(status, "<html><body>Bad gateway</body></html>")
                      if error_body is None else json_reply(error_body, status))
    err = await failure(client.complete(cfg(upstream), REQ))
    d = err.diagnostic
    assert d.code == "upstream_error" and d.status == status
    assert vendor_message in (d.detail or "") and vendor_message in d.message
    assert "明天下午" not in d.message  # never the request
    assert err.retryable is (status in (429, 502))
    assert_secret_free(err)


async def test_echoed_key_is_scrubbed(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply({"error": {"message": f"Incorrect API key provided: {KEY}"}}, 401)
    err = await failure(client.complete(cfg(upstream), REQ))
    assert err.diagnostic.status == 401
    assert_secret_free(err)


async def test_total_timeout(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = slow_reply(WAIT_S, json_reply(chat_body()))
    err = await failure(client.complete(cfg(upstream, timeout_s=0.1), REQ))
    assert err.code == "timeout" and "0.1" in (err.diagnostic.detail_in("en") or "")
    assert_secret_free(err)


async def test_server_hanging_up_is_an_upstream_error(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = hang_up
    err = await failure(client.complete(cfg(upstream), REQ))
    assert err.code == "upstream_error" and "closed by the server" in (err.diagnostic.detail_in("en") or "")
    assert isinstance(err.__cause__, aiohttp.ServerDisconnectedError)  # translated once, chained
    assert_secret_free(err)


async def test_connection_refused(client: LLMClient) -> None:
    err = await failure(client.complete(cfg(f"http://127.0.0.1:{free_port()}/v1"), REQ))
    assert err.code == "connect_error" and err.retryable
    assert isinstance(err.__cause__, aiohttp.ClientConnectorError)
    assert_secret_free(err)


async def test_a_refused_connection_names_host_port_and_reason_only(client: LLMClient) -> None:
    # aiohttp's own words say `ssl:default` for a plain http URL: nothing ops should chase.
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    errors = [await failure(client.complete(cfg(url), REQ))]
    with pytest.raises(LLMCallError) as info:
        async with client.stream(cfg(url), REQ) as s:
            async for _ in s:
                pass
    errors.append(info.value)
    for err in errors:
        assert err.code == "connect_error"
        assert err.diagnostic.detail == f"Cannot connect to host 127.0.0.1:{port} [Connection refused]"


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        # aiohttp's own (complete() on the session; streams see them as httpx's __cause__)
        (aiohttp.ConnectionTimeoutError("connect timed out"), "connect_error"),
        (aiohttp.SocketTimeoutError("no data"), "timeout"),
        (aiohttp.ServerDisconnectedError(), "upstream_error"),
        (aiohttp.ClientPayloadError("cut short"), "upstream_error"),
        (aiohttp.ClientOSError(104, "Connection reset by peer"), "upstream_error"),
        # httpx's (the stream path)
        (httpx.ReadTimeout("read timed out"), "timeout"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "connect_error"),
        (httpx.RemoteProtocolError("peer closed connection"), "upstream_error"),
        (TimeoutError(), "timeout"),
    ],
)
def test_transport_error_table(exc: BaseException, code: str) -> None:
    # The failures a local socket cannot stage on demand, through the one translation table.
    assert describe_transport_error(exc)[0] == code


async def test_malformed_body(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = status_reply(200, '{"choices": [{"message": {"content": "x',
                                  "application/json")
    err = await failure(client.complete(cfg(upstream), REQ))
    assert err.code == "upstream_error" and "malformed" in err.diagnostic.message_in("en")


async def test_truncated_by_reasoning_raises(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply(
        {
            "choices": [
                {"message": {"content": None, "reasoning": "好的，用户说……"}, "finish_reason": "length"}
            ],
            "usage": {
                "prompt_tokens": 50,
                "completion_tokens": 300,
                "completion_tokens_details": {"reasoning_tokens": 300},
            },
        }
    )
    d = (await failure(client.complete(cfg(upstream), REQ))).diagnostic
    assert (d.code, d.max_tokens, d.reasoning_tokens, d.finish_reason) == (
        "truncated_by_reasoning",
        300,
        300,
        "length",
    )


async def test_truncated_text_is_returned_with_diagnostic(
    client: LLMClient, upstream: Upstream
) -> None:
    upstream.reply = json_reply(chat_body('{"intent": "ag', "length"))
    result = await client.complete(cfg(upstream), REQ)
    assert result.text == '{"intent": "ag'
    assert result.diagnostic is not None and result.diagnostic.code == "truncated"


async def test_in_band_error_object(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = json_reply({"error": {"message": "upstream overloaded", "code": 503}})
    err = await failure(client.complete(cfg(upstream), REQ))
    assert err.code == "upstream_error" and "overloaded" in err.diagnostic.message


async def test_key_never_logged(
    client: LLMClient, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    upstream.reply = json_reply({"error": {"message": f"bad key {KEY}"}}, 500)
    err = await failure(client.complete(cfg(upstream), REQ))
    logging.getLogger("test").exception("call failed", exc_info=err)
    upstream.reply = json_reply(chat_body())
    await client.complete(cfg(upstream), REQ)
    assert KEY not in caplog.text
    assert all(KEY not in str(record.__dict__) for record in caplog.records)


# -- stream() ------------------------------------------------------------------------------


def sse(*objs: Any) -> bytes:
    return b"".join(
        b"data: " + (o if isinstance(o, bytes) else orjson.dumps(o)) + b"\n\n" for o in objs
    )


def chunk(content: str | None = None, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


async def collect(client: LLMClient, upstream: Upstream, **kw: Any) -> tuple[list[Any], Any]:
    events = []
    async with client.stream(cfg(upstream), REQ, **kw) as s:
        async for event in s:
            events.append(event)
    return events, s


async def test_stream_happy_path(client: LLMClient, upstream: Upstream) -> None:
    script = upstream.reply = sse_reply(
        [
            (0, sse(chunk(""))),
            (0.01, sse(chunk("你好"))),
            (0, sse(chunk("。", "stop"))),
            (0, sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})),
            (0, b"data: [DONE]\n\n"),
        ]
    )
    events, s = await collect(client, upstream)
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("你好"), TextDelta("。")]
    assert events[-2] == Usage(3, 2, None) and events[-1] == Finish("stop")
    assert s.ttft_ms is not None and s.ttft_ms >= 5 and s.finish_reason == "stop"
    assert s.text == "你好。" and s.usage == Usage(3, 2, None) and s.diagnostic is None
    assert script.finished and not script.disconnected.is_set()
    (seen,) = upstream.requests
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.json()["stream_options"] == {"include_usage": True}


async def test_stream_state_is_what_the_consumer_received(
    client: LLMClient, upstream: Upstream
) -> None:
    # Two events in one network write: the first is handed over before the second is counted.
    upstream.reply = sse_reply([(0, sse(chunk("你"), chunk("好", "stop")))])
    async with client.stream(cfg(upstream), REQ) as s:
        assert await anext(s) == TextDelta("你")
        assert s.text == "你"
        assert await anext(s) == TextDelta("好")
        assert s.text == "你好" and s.diagnostic is None
        assert await anext(s) == Finish("stop")


async def test_stream_http_error(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = sse_reply(
        [(0, b'{"error": {"message": "Service Unavailable", "code": 503}}')], status=503)
    err = await failure(collect(client, upstream))
    assert err.diagnostic.status == 503 and "Service Unavailable" in err.diagnostic.message


async def test_stream_ttft_timeout_hangs_up(client: LLMClient, upstream: Upstream) -> None:
    script = upstream.reply = sse_reply([(0, sse(chunk(""))), (WAIT_S, sse(chunk("late")))])
    err = await failure(collect(client, upstream, ttft_timeout_s=0.1, read_timeout_s=5))
    assert err.code == "timeout" and "first token" in (err.diagnostic.detail_in("en") or "")
    await asyncio.wait_for(script.disconnected.wait(), WAIT_S)


async def test_stream_stall_with_keepalives(client: LLMClient, upstream: Upstream) -> None:
    keepalives = [(0.05, b": keep-alive\n\n")] * 200
    upstream.reply = sse_reply([(0, sse(chunk("你"))), *keepalives, (0, sse(chunk("好", "stop")))])
    err = await failure(collect(client, upstream, read_timeout_s=0.3))
    assert err.code == "timeout" and "keep-alive" in (err.diagnostic.detail_in("en") or "")


async def test_stream_malformed_chunk(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = sse_reply(
        [(0, sse(chunk("你"))), (0, b'data: {"choices": [{"delta": {"con\n\n')])
    d = (await failure(collect(client, upstream))).diagnostic
    assert d.code == "upstream_error" and "malformed" in d.message_in("en") and "con" not in (d.detail or "")


async def test_stream_eof_without_finish_is_a_disconnect(
    client: LLMClient, upstream: Upstream
) -> None:
    upstream.reply = sse_reply([(0, sse(chunk("你")))])
    err = await failure(collect(client, upstream))
    assert err.code == "upstream_error" and "closed" in (err.diagnostic.detail_in("en") or "")


async def test_stream_server_hanging_up(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = hang_up
    err = await failure(collect(client, upstream))
    assert err.code == "upstream_error" and "closed by the server" in (err.diagnostic.detail_in("en") or "")
    assert_secret_free(err)


async def test_stream_finish_without_done_is_fine(client: LLMClient, upstream: Upstream) -> None:
    upstream.reply = sse_reply([(0, sse(chunk("好", "stop")))])
    events, _ = await collect(client, upstream)
    assert events[-1] == Finish("stop")


async def test_stream_empty_reasoning_only_ends_with_diagnostic(
    client: LLMClient, upstream: Upstream
) -> None:
    upstream.reply = sse_reply(
        [(0, sse({"choices": [{"delta": {"reasoning": "嗯"}, "finish_reason": "length"}]},
                 b"[DONE]"))]
    )
    events, s = await collect(client, upstream)
    assert isinstance(events[-1], Finish) and events[-1].diagnostic is not None
    assert events[-1].diagnostic.code == "truncated_by_reasoning"
    assert events[-1].usable is False  # the stream's verdict: callers do not re-judge text
    assert s.diagnostic is events[-1].diagnostic
    assert sum(isinstance(e, Finish) for e in events) == 1


async def test_stream_cut_answer_is_usable_with_its_diagnostic(
    client: LLMClient, upstream: Upstream
) -> None:
    upstream.reply = sse_reply([(0, sse(chunk("您好，我们"), chunk(None, "length")))])
    events, _ = await collect(client, upstream)
    assert events[-1].usable is True and events[-1].diagnostic.code == "truncated"


async def test_stream_aclose_closes_upstream_and_records_cancelled(
    client: LLMClient, upstream: Upstream
) -> None:
    script = upstream.reply = sse_reply([(0, sse(chunk("你"))), *[(0.05, sse(chunk("好")))] * 200])
    async with client.stream(cfg(upstream), REQ) as s:
        async for _event in s:
            break  # barge-in
    await asyncio.wait_for(script.disconnected.wait(), WAIT_S)  # the server saw it
    assert not script.finished
    assert s.diagnostic is not None and s.diagnostic.code == "cancelled"


async def test_stream_cancelled_task_closes_upstream(client: LLMClient, upstream: Upstream) -> None:
    script = upstream.reply = sse_reply([(0, sse(chunk("你"))), (WAIT_S, sse(chunk("好")))])
    started = asyncio.Event()

    async def consume() -> None:
        async with client.stream(cfg(upstream), REQ) as s:
            async for _ in s:
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), WAIT_S)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(script.disconnected.wait(), WAIT_S)
