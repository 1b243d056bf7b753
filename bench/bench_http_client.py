"""CPU per non-streamed POST: the lane's aiohttp session vs its lean pool (llm/lean_http.py).

    .venv/bin/python bench/bench_http_client.py [--requests 3000] [--rounds 6] [--inflight 16]

The fixed-answer upstream (loadgen.serve_fixed, aiohttp on uvloop) runs in its own process;
this process, on uvloop, sends the decision's body with `--inflight` requests outstanding, in
rounds that alternate between the variants (the order swapped every other round):

  aiohttp   the lane's aiohttp session and `transport.read_bounded`, as `LLMClient._post`
            posted before the lean pool (and still does for a URL the pool does not take)
  lean      `LLMClient._post` as `complete()` calls it: the lane's `LeanPool.post`
            (asyncio protocol + httptools), same URL, headers and body, the same size bound
  complete/aiohttp, complete/lean
            the whole `LLMClient.complete()` (shaping, parsing, classification) over each

Figures: this process's CPU (user + system) per request, median of the rounds, and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

from bench_nlu import DECIDE, MODEL, REPLY  # noqa: E402
from loadgen import free_port, pct, run_batch, serve_fixed  # noqa: E402


def cpu() -> float:
    t = os.times()
    return t.user + t.system


async def main(args: argparse.Namespace) -> None:
    import orjson

    from callout_server.llm import LLMClient, LLMConfig
    from callout_server.llm.request_body import build_request
    from callout_server.llm.transport import (
        ERROR_BODY_LIMIT,
        aiohttp_session,
        read_bounded,
        request_headers,
    )
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import llm_request

    port = free_port()
    proc = multiprocessing.Process(target=serve_fixed, args=(port, REPLY), daemon=True)
    proc.start()
    try:
        for _ in range(200):
            try:
                _, w = await asyncio.open_connection("127.0.0.1", port)
                w.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        cfg = LLMConfig(tier="nlu", name="bench", base_url=f"http://127.0.0.1:{port}/v1",
                        model=MODEL, max_tokens=300, temperature=0.1)
        req = llm_request(DecideRequest.model_validate_json(orjson.dumps(DECIDE)))
        built = build_request(cfg, req, stream=False)
        body = orjson.dumps(built.body)
        headers = request_headers(cfg.api_key, stream=False)
        client = LLMClient()
        lane = client._lane(cfg)
        limit = lane.limits.max_response_bytes

        async def aiohttp_post(self: Any, lane: Any, url: str, body: bytes,
                               headers: dict[str, str], total: float) -> Any:
            import aiohttp

            timeout = aiohttp.ClientTimeout(sock_connect=min(5.0, total))
            session = aiohttp_session(lane.transport)
            async with lane.slots, session.post(url, data=body, headers=headers,
                                                timeout=timeout,
                                                allow_redirects=False) as response:
                if response.status >= 300:
                    content, _ = await read_bounded(response, ERROR_BODY_LIMIT)
                    return response.status, content, response.headers.get("retry-after")
                content, whole = await read_bounded(response, limit)
                return response.status, content if whole else None, None

        old_client = LLMClient()
        old_client._post = aiohttp_post.__get__(old_client)  # type: ignore[method-assign]
        old_lane = old_client._lane(cfg)

        async def v_aiohttp() -> None:
            status, content, _ = await old_client._post(old_lane, built.url, body, headers, 10.0)
            assert status == 200 and content == REPLY

        async def v_lean() -> None:
            status, content, _ = await client._post(lane, built.url, body, headers, 10.0)
            assert status == 200 and content == REPLY, (status, content)

        async def v_complete_aiohttp() -> None:
            await old_client.complete(cfg, req)

        async def v_complete_lean() -> None:
            await client.complete(cfg, req)

        variants = {"aiohttp": v_aiohttp, "lean": v_lean,
                    "complete/aiohttp": v_complete_aiohttp, "complete/lean": v_complete_lean}
        for fn in variants.values():  # warm: connections open, caches filled
            await run_batch(fn, 300, args.inflight)
        per: dict[str, list[float]] = {name: [] for name in variants}
        lat: dict[str, list[float]] = {name: [] for name in variants}
        for i in range(args.rounds):
            names = list(variants)
            if i % 2:
                names.reverse()
            for name in names:
                c0 = cpu()
                _, latencies = await run_batch(variants[name], args.requests, args.inflight)
                per[name].append((cpu() - c0) / args.requests * 1e6)
                lat[name] += latencies
        print(f"{args.inflight} in flight, {args.rounds} rounds x {args.requests}, "
              f"load average {os.getloadavg()[0]:.1f}; client CPU µs per request "
              f"(median of rounds, range), p50 / p99 ms")
        for name in variants:
            print(f"  {name:18} {statistics.median(per[name]):7.1f}  "
                  f"({min(per[name]):.1f}-{max(per[name]):.1f})  "
                  f"{pct(lat[name], 0.5):.2f} / {pct(lat[name], 0.99):.2f}")
        print(f"  lean / aiohttp: {statistics.median(per['lean']) / statistics.median(per['aiohttp']):.2f}x; "
              f"complete: {statistics.median(per['complete/lean']) / statistics.median(per['complete/aiohttp']):.2f}x")
        await client.aclose()
        await old_client.aclose()
    finally:
        proc.terminate()
        proc.join(5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--inflight", type=int, default=16)
    import uvloop

    uvloop.run(main(parser.parse_args()))
