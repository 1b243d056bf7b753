"""LLMClient against httpx.MockTransport: request shape, error translation, timeouts, secrecy."""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator, Callable
from typing import Any

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

KEY = "sk-live-4f9a1c2b3d4e5f60718293a4b5c6d7e8"
# Thinking off unless the configuration says otherwise, as the NLU tier asks.
REQ = LLMRequest(messages=[{"role": "user", "content": "明天下午三点以后都可以"}],
                 default_thinking=False)


def cfg(**kw: Any) -> LLMConfig:
    base: dict[str, Any] = {
        "tier": "t",
        "name": "t",
        "base_url": "http://vllm.test/v1",
        "model": "qwen3-8b",
        "api_key": KEY,
        "timeout_s": 5.0,
    }
    return LLMConfig(**{**base, **kw})


def client_for(handler: Callable[[httpx.Request], Any]) -> LLMClient:
    return LLMClient(http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


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


# -- complete() ----------------------------------------------------------------------------


async def test_complete_sends_bearer_and_orjson_body() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_body())

    client = client_for(handler)
    result = await client.complete(cfg(), REQ)
    assert result.text == '{"intent": "agree"}' and result.finish_reason == "stop"
    assert result.usage == Usage(7, 5, None) and result.diagnostic is None
    assert result.dialect == "vllm" or result.dialect == "selfhosted"
    assert result.thinking is False and result.max_tokens == 300 and result.latency_ms > 0
    (request,) = seen
    assert str(request.url) == "http://vllm.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = orjson.loads(request.content)
    assert body["model"] == "qwen3-8b" and body["stream"] is False
    assert KEY not in repr(client) and KEY not in repr(cfg())


async def test_no_authorization_header_without_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_body())

    await client_for(handler).complete(cfg(api_key=""), REQ)
    assert "authorization" not in seen[0].headers


async def test_reasoning_is_never_in_text() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=chat_body("<think>嗯</think>好的", reasoning="先想"))

    result = await client_for(handler).complete(cfg(), REQ)
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
    status: int, error_body: dict | None, vendor_message: str
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if error_body is None:
            return httpx.Response(status, text="<html><body>Bad gateway</body></html>")
        return httpx.Response(status, json=error_body)

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    d = info.value.diagnostic
    assert d.code == "upstream_error" and d.status == status
    assert vendor_message in (d.detail or "") and vendor_message in d.message
    assert "明天下午" not in d.message  # never the request
    assert info.value.retryable is (status in (429, 502))
    assert_secret_free(info.value)


async def test_echoed_key_is_scrubbed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, json={"error": {"message": f"Incorrect API key provided: {KEY}"}}
        )

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    assert info.value.diagnostic.status == 401
    assert_secret_free(info.value)


async def test_total_timeout() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(2)
        return httpx.Response(200, json=chat_body())

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(timeout_s=0.1), REQ)
    assert info.value.code == "timeout" and "0.1" in (info.value.diagnostic.detail or "")
    assert_secret_free(info.value)


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ReadTimeout("read timed out"), "timeout"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "connect_error"),
        (httpx.ConnectTimeout("connect timed out"), "connect_error"),
        (httpx.RemoteProtocolError("peer closed connection"), "upstream_error"),
    ],
)
async def test_transport_errors(exc: Exception, code: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    assert info.value.code == code
    assert info.value.__cause__ is exc  # translated once, chained
    assert_secret_free(info.value)


async def test_connection_refused_for_real() -> None:
    client = LLMClient()
    try:
        with pytest.raises(LLMCallError) as info:
            await client.complete(cfg(base_url="http://127.0.0.1:9/v1"), REQ)
        assert info.value.code == "connect_error" and info.value.retryable
        assert_secret_free(info.value)
    finally:
        await client.aclose()


async def test_malformed_body() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b'{"choices": [{"message": {"content": "x')

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    assert info.value.code == "upstream_error" and "malformed" in info.value.diagnostic.message


async def test_truncated_by_reasoning_raises() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "choices": [
                    {
                        "message": {"content": None, "reasoning": "好的，用户说……"},
                        "finish_reason": "length",
                    }
                ],
                "usage": {
                    "prompt_tokens": 50,
                    "completion_tokens": 300,
                    "completion_tokens_details": {"reasoning_tokens": 300},
                },
            },
        )

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    d = info.value.diagnostic
    assert (d.code, d.max_tokens, d.reasoning_tokens, d.finish_reason) == (
        "truncated_by_reasoning",
        300,
        300,
        "length",
    )


async def test_truncated_text_is_returned_with_diagnostic() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=chat_body('{"intent": "ag', "length"))

    result = await client_for(handler).complete(cfg(), REQ)
    assert result.text == '{"intent": "ag'
    assert result.diagnostic is not None and result.diagnostic.code == "truncated"


async def test_in_band_error_object() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"error": {"message": "upstream overloaded", "code": 503}})

    with pytest.raises(LLMCallError) as info:
        await client_for(handler).complete(cfg(), REQ)
    assert info.value.code == "upstream_error" and "overloaded" in info.value.diagnostic.message


async def test_key_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": {"message": f"bad key {KEY}"}})

    caplog.set_level(logging.DEBUG)
    client = client_for(handler)
    with pytest.raises(LLMCallError) as info:
        await client.complete(cfg(), REQ)
    logging.getLogger("test").exception("call failed", exc_info=info.value)
    ok = client_for(lambda r: httpx.Response(200, json=chat_body()))
    await ok.complete(cfg(), REQ)
    assert KEY not in caplog.text
    assert all(KEY not in str(record.__dict__) for record in caplog.records)


# -- stream() over MockTransport ----------------------------------------------------------


class Body(httpx.AsyncByteStream):
    """A scripted response body: (delay_s, bytes) steps; records whether it was closed."""

    def __init__(self, steps: list[tuple[float, bytes]]) -> None:
        self.steps = steps
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for delay, data in self.steps:
            if delay:
                await asyncio.sleep(delay)
            yield data

    async def aclose(self) -> None:
        self.closed = True


def sse(*objs: Any) -> bytes:
    return b"".join(
        b"data: " + (o if isinstance(o, bytes) else orjson.dumps(o)) + b"\n\n" for o in objs
    )


def chunk(content: str | None = None, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


def stream_client(body: Body, status: int = 200) -> LLMClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, stream=body, headers={"content-type": "text/event-stream"})

    return client_for(handler)


async def collect(client: LLMClient, **kw: Any) -> tuple[list[Any], Any]:
    events = []
    async with client.stream(cfg(), REQ, **kw) as s:
        async for event in s:
            events.append(event)
    return events, s


async def test_stream_happy_path() -> None:
    body = Body(
        [
            (0, sse(chunk(""))),
            (0.01, sse(chunk("你好"))),
            (0, sse(chunk("。", "stop"))),
            (0, sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})),
            (0, b"data: [DONE]\n\n"),
        ]
    )
    events, s = await collect(stream_client(body))
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("你好"), TextDelta("。")]
    assert events[-2] == Usage(3, 2, None) and events[-1] == Finish("stop")
    assert s.ttft_ms is not None and s.ttft_ms >= 5 and s.finish_reason == "stop"
    assert s.text == "你好。" and s.usage == Usage(3, 2, None) and s.diagnostic is None
    assert body.closed


async def test_stream_http_error() -> None:
    body = Body([(0, b'{"error": {"message": "Service Unavailable", "code": 503}}')])
    with pytest.raises(LLMCallError) as info:
        await collect(stream_client(body, status=503))
    assert (
        info.value.diagnostic.status == 503
        and "Service Unavailable" in info.value.diagnostic.message
    )
    assert body.closed


async def test_stream_ttft_timeout() -> None:
    body = Body([(0, sse(chunk(""))), (1.0, sse(chunk("late")))])
    with pytest.raises(LLMCallError) as info:
        await collect(stream_client(body), ttft_timeout_s=0.1, read_timeout_s=5)
    assert info.value.code == "timeout" and "first token" in (info.value.diagnostic.detail or "")
    assert body.closed


async def test_stream_stall_with_keepalives() -> None:
    keepalives = [(0.05, b": keep-alive\n\n")] * 20
    body = Body([(0, sse(chunk("你"))), *keepalives, (0, sse(chunk("好", "stop")))])
    with pytest.raises(LLMCallError) as info:
        await collect(stream_client(body), read_timeout_s=0.3)
    assert info.value.code == "timeout" and "keep-alive" in (info.value.diagnostic.detail or "")


async def test_stream_malformed_chunk() -> None:
    body = Body([(0, sse(chunk("你"))), (0, b'data: {"choices": [{"delta": {"con\n\n')])
    with pytest.raises(LLMCallError) as info:
        await collect(stream_client(body))
    d = info.value.diagnostic
    assert d.code == "upstream_error" and "malformed" in d.message and "con" not in (d.detail or "")


async def test_stream_eof_without_finish_is_a_disconnect() -> None:
    body = Body([(0, sse(chunk("你")))])
    with pytest.raises(LLMCallError) as info:
        await collect(stream_client(body))
    assert info.value.code == "upstream_error" and "closed" in (info.value.diagnostic.detail or "")


async def test_stream_finish_without_done_is_fine() -> None:
    events, _ = await collect(stream_client(Body([(0, sse(chunk("好", "stop")))])))
    assert events[-1] == Finish("stop")


async def test_stream_empty_reasoning_only_ends_with_diagnostic() -> None:
    body = Body(
        [
            (
                0,
                sse(
                    {"choices": [{"delta": {"reasoning": "嗯"}, "finish_reason": "length"}]},
                    b"[DONE]",
                ),
            )
        ]
    )
    events, s = await collect(stream_client(body))
    assert isinstance(events[-1], Finish) and events[-1].diagnostic is not None
    assert events[-1].diagnostic.code == "truncated_by_reasoning"
    assert events[-1].usable is False  # the stream's verdict: callers do not re-judge text
    assert s.diagnostic is events[-1].diagnostic
    assert sum(isinstance(e, Finish) for e in events) == 1


async def test_stream_aclose_closes_upstream_and_records_cancelled() -> None:
    body = Body([(0, sse(chunk("你"))), *[(0.05, sse(chunk("好")))] * 100])
    async with stream_client(body).stream(cfg(), REQ) as s:
        async for _event in s:
            break  # barge-in
    assert body.closed
    assert s.diagnostic is not None and s.diagnostic.code == "cancelled"


async def test_stream_cancelled_task_closes_upstream() -> None:
    body = Body([(0, sse(chunk("你"))), (10, sse(chunk("好")))])
    client = stream_client(body)

    async def consume() -> None:
        async with client.stream(cfg(), REQ) as s:
            async for _ in s:
                pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert body.closed
