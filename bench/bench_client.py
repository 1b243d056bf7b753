"""Benchmark the shared LLM client's hot path (NLU: one non-streamed chat completion).

    .venv/bin/python bench/bench_client.py [--requests 3000] [--rounds 3] [--loop uvloop|asyncio]

An upstream runs in a separate process (a minimal aiohttp server answering every POST with a
fixed chat completion, on uvloop), so this process's event loop measures the client alone.
The emulator is not used here: its scripting and request recording would be measured too.

For each concurrency (1, 16, 64 requests in flight) the variants run interleaved, in rounds,
with a fixed request count each:
  (a) bare   — POST + read body on the aiohttp-backed httpx client (transport floor)
  (b) client — LLMClient.complete() on that same client (request building, orjson, adapter,
               classification on top of (a))
  (c) plain  — POST + read body on httpx.AsyncClient's default transport (the alternative)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import httpx
import orjson

from callout_server.llm import LLMClient, LLMConfig, LLMRequest
from callout_server.llm.transport import make_http_client, make_plain_http_client

REPLY = orjson.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "qwen3.5-2b",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": '{"intent": "agree", "slots": {"time": "明天下午三点以后"}}',
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 180, "completion_tokens": 21, "total_tokens": 201},
    }
)
MESSAGES = [
    {"role": "system", "content": "你是外呼意图识别器，只输出一个 JSON 对象。" * 4},
    {"role": "assistant", "content": "请问您什么时候方便接听回访？"},
    {"role": "user", "content": "明天下午三点以后都可以"},
]


def serve(port: int) -> None:
    """The upstream process: fixed answer, no per-request work beyond reading the body."""
    from aiohttp import web

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=REPLY, content_type="application/json")

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_upstream() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("upstream did not start")


async def run_batch(
    call: Callable[[], Awaitable[None]], total: int, inflight: int
) -> tuple[float, list[float]]:
    latencies: list[float] = []
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            t = time.perf_counter()
            await call()
            latencies.append((time.perf_counter() - t) * 1000.0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(inflight)))
    return time.perf_counter() - start, latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(args: argparse.Namespace) -> None:
    proc, base_url = start_upstream()
    try:
        fast = make_http_client()
        plain = make_plain_http_client()
        client = LLMClient(http=fast)
        cfg = LLMConfig(
            tier="nlu",
            name="bench",
            base_url=base_url,
            model="qwen3.5-2b",
            api_key="sk-bench-0000000000000000",
        )
        req = LLMRequest(messages=MESSAGES, json_mode=True)
        url = base_url + "/chat/completions"
        body = orjson.dumps(
            {
                "model": "qwen3.5-2b",
                "messages": MESSAGES,
                "max_tokens": 300,
                "response_format": {"type": "json_object"},
            }
        )
        headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}

        def bare(http: httpx.AsyncClient) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                response = await http.post(url, content=body, headers=headers)
                assert response.status_code == 200 and response.content

            return call

        async def complete() -> None:
            result = await client.complete(cfg, req)
            assert result.text

        variants: dict[str, Callable[[], Awaitable[None]]] = {
            "a bare (aiohttp transport)": bare(fast),
            "b LLMClient.complete()": complete,
            "c bare (httpx default)": bare(plain),
        }
        for call in variants.values():  # warm-up: connections, caches, imports
            await run_batch(call, 200, 16)

        print(
            f"loop={type(asyncio.get_running_loop()).__module__} requests/variant/round="
            f"{args.requests} rounds={args.rounds} cpus={os.cpu_count()}"
        )
        print(f"{'in flight':>9} | {'variant':<28} | {'req/s':>8} | {'p50 ms':>7} | {'p99 ms':>7}")
        print("-" * 72)
        for inflight in (1, 16, 64):
            n = max(200, args.requests // 4) if inflight == 1 else args.requests
            round_rps: dict[str, list[float]] = {name: [] for name in variants}
            lats: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.rounds):  # interleaved so drift hits every variant alike
                for name, call in variants.items():
                    elapsed, latencies = await run_batch(call, n, inflight)
                    round_rps[name].append(n / elapsed)
                    lats[name].extend(latencies)
            # Median of the rounds: a neighbour's burst on a shared machine spoils one round,
            # not the figure.
            rps = {name: statistics.median(round_rps[name]) for name in variants}
            for name in variants:
                print(
                    f"{inflight:>9} | {name:<28} | {rps[name]:>8.0f} | "
                    f"{statistics.median(lats[name]):>7.2f} | {pct(lats[name], 0.99):>7.2f}"
                )
            a, b, c = (rps[name] for name in variants)
            print(
                f"{'':>9} | ratios: client/bare = {b / a:.2f}, aiohttp/httpx-default = {a / c:.1f}x"
            )
            print("-" * 72)
        await client.aclose()
        await fast.aclose()
        await plain.aclose()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    ns = parser.parse_args()
    if ns.serve:
        serve(ns.serve)
    else:
        if ns.loop == "uvloop":
            try:
                import uvloop

                uvloop.install()
            except ImportError:
                print("uvloop not installed: using asyncio")
        asyncio.run(main(ns))
