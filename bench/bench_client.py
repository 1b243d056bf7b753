"""Benchmark the shared LLM client's hot path (NLU: one non-streamed chat completion).

    .venv/bin/python bench/bench_client.py [--requests 3000] [--rounds 3] [--loop uvloop|asyncio]

An upstream runs in a separate process (a minimal aiohttp server answering every POST with a
fixed chat completion, on uvloop), so this process's event loop measures the client alone.
The emulator is not used here: its scripting and request recording would be measured too.

For each concurrency (1, 16, 64 requests in flight) the variants run interleaved, in rounds,
with a fixed request count each:
  (a) bare   — POST + read body on an aiohttp session like the client's own (the floor)
  (b) client — LLMClient.complete() as the tiers use it (request shaping, orjson, adapter,
               classification on top of (a))
  (b') client via httpx — the same complete() posting through the httpx layer on the same
               transport instead of the aiohttp session: what the fast path saves
  (c) httpx  — POST + read body through httpx on the same aiohttp transport (the httpx layer
               the client's non-streamed path skips)
  (d) plain  — POST + read body on httpx.AsyncClient's default transport (the alternative)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from collections.abc import Awaitable, Callable

import httpx
import orjson
from loadgen import free_port, pct, run_batch, serve_fixed, wait_port

from callout_server.llm import LLMClient, LLMConfig, LLMRequest
from callout_server.llm.transport import (
    aiohttp_session,
    make_http_client,
    make_plain_http_client,
    make_transport,
)


class ClientViaHttpx(LLMClient):
    """complete() through httpx on the client's transport (what it did before the fast path)."""

    async def _post(self, url: str, body: bytes, headers: dict[str, str], total: float
                    ) -> tuple[int, bytes, str | None]:
        response = await self._http.post(url, content=body, headers=headers,
                                          timeout=httpx.Timeout(total, connect=5.0))
        return response.status_code, response.content, response.headers.get("retry-after")

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


def start_upstream() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        wait_port(port, proc, "upstream", timeout_s=15)
    except RuntimeError:
        proc.kill()
        raise
    return proc, f"http://127.0.0.1:{port}/v1"


async def main(args: argparse.Namespace) -> None:
    proc, base_url = start_upstream()
    try:
        transport = make_transport()
        session = aiohttp_session(transport)
        fast = make_http_client(transport=transport)
        plain = make_plain_http_client()
        client = LLMClient()
        via_httpx = ClientViaHttpx()
        cfg = LLMConfig(
            tier="nlu",
            name="bench",
            base_url=base_url,
            model="qwen3.5-2b",
            api_key="sk-bench-0000000000000000",
        )
        req = LLMRequest(messages=MESSAGES, json_mode=True, default_thinking=False)
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

        async def bare_session() -> None:
            async with session.post(url, data=body, headers=headers) as response:
                assert response.status == 200 and await response.read()

        async def complete() -> None:
            result = await client.complete(cfg, req)
            assert result.text

        async def complete_httpx() -> None:
            result = await via_httpx.complete(cfg, req)
            assert result.text

        variants: dict[str, Callable[[], Awaitable[None]]] = {
            "a bare (aiohttp session)": bare_session,
            "b LLMClient.complete()": complete,
            "b' complete() via httpx": complete_httpx,
            "c bare (httpx on aiohttp)": bare(fast),
            "d bare (httpx default)": bare(plain),
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
            a, b, b2, c, d = (rps[name] for name in variants)
            print(f"{'':>9} | ratios: client/bare = {b / a:.2f}, fast path/via httpx = "
                  f"{b / b2:.2f}, "
                  f"httpx-on-aiohttp/httpx-default = {c / d:.1f}x")
            print("-" * 72)
        await client.aclose()
        await via_httpx.aclose()
        await fast.aclose()  # closes the transport and its session
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
        serve_fixed(ns.serve, REPLY)
    else:
        if ns.loop == "uvloop":
            try:
                import uvloop

                uvloop.install()
            except ImportError:
                print("uvloop not installed: using asyncio")
        asyncio.run(main(ns))
