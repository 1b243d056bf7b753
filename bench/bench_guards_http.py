"""Rule answers through HTTP, beside model-answered decisions, on one worker in one run.

    .venv/bin/python bench/bench_guards_http.py [--requests 600] [--rounds 5]

The processes of bench_nlu.py (a fixed-answer upstream on uvloop, one `uvicorn` worker on a
fresh PostgreSQL database with the call-log recorder on, this load generator), one request
in flight, the variants alternating in rounds so drift hits them alike:

  refused       POST /api/nlu/decide that the route refuses (422: no intents, no slots):
                edge, auth, body parsing and validation, no rule and no model: the
                route's own cost
  rule hit      POST /api/nlu/decide "你们别再给我打电话了": a global intent's phrase rule
                answers (the default intents), no model call
  model         POST /api/nlu/decide "明天下午三点以后都可以": no rule hits, the model
                answers (global intents offered beside the node's)
  model, none   the same with "global_intents": false (no rule runs, the node's own prompt)
  screen rule   POST /api/nlu/screen, a carrier announcement: the screening rules answer

Printed: p50 / p90 per variant over all rounds, and what a rule answer adds over the
route's own cost (rule hit - refused), what checking the rules costs a model-answered
decision (model - model, none). Target: < 1 ms added.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp
import orjson
from bench_nlu import (
    DECIDE,
    REPLY,
    SERVICE_TOKEN,
    create_pg_database,
    drop_pg_database,
    start_worker,
)
from loadgen import free_port, pct, run_batch, serve_fixed, wait_port

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

def bodies() -> dict[str, tuple[str, bytes, str]]:
    """variant -> (path, body, what the answer must say)."""
    return {
        "refused": ("/api/nlu/decide", orjson.dumps({**DECIDE, "intents": [], "slots": [],
                                                     "fallback_intent": None}), "422"),
        "rule hit": ("/api/nlu/decide", orjson.dumps({**DECIDE, "utterance": "你们别再给我打电话了"}),
                     "opt_out"),
        "model": ("/api/nlu/decide", orjson.dumps(DECIDE), "agree"),
        "model, none": ("/api/nlu/decide", orjson.dumps({**DECIDE, "global_intents": False}),
                        "agree"),
        "screen rule": ("/api/nlu/screen", orjson.dumps({
            "call_id": "c-bench", "utterance": "您好，您拨打的电话已关机，请稍后再拨。"}), "carrier"),
    }


async def load(args: argparse.Namespace, worker: str) -> None:
    headers = {"content-type": "application/json", "authorization": f"Bearer {SERVICE_TOKEN}"}
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as http:
        def caller(path: str, body: bytes, expect: str):
            async def call() -> None:
                async with http.post(f"{worker}{path}", data=body, headers=headers) as r:
                    data = await r.read()
                if expect == "422":
                    assert r.status == 422, data
                    return
                assert r.status == 200, data
                got = orjson.loads(data)
                said = (got.get("global_intent") or {}).get("name") or got.get("intent") \
                    or got.get("answered_by")
                assert said == expect, got
            return call

        variants = {name: caller(*spec) for name, spec in bodies().items()}
        for call in variants.values():  # warm-up
            await run_batch(call, 300, 4)
        lats: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, call in variants.items():
                _, latencies = await run_batch(call, args.requests, 1)
                lats[name].extend(latencies)
        print(f"one worker, 1 in flight, {args.requests} requests x {args.rounds} rounds per "
              "variant, PostgreSQL call log on")
        print(f"{'variant':<14} | {'p50 ms':>7} | {'p90 ms':>7}")
        print("-" * 34)
        p50 = {}
        for name, values in lats.items():
            p50[name] = statistics.median(values)
            print(f"{name:<14} | {p50[name]:>7.3f} | {pct(values, 0.9):>7.3f}")
        print("-" * 34)
        print(f"rule hit over the route's own cost (rule hit - refused): "
              f"{p50['rule hit'] - p50['refused']:+.3f} ms")
        print(f"rule hit vs a model-answered decision (rule hit / model): "
              f"{p50['rule hit'] / p50['model']:.2f}x")
        print(f"rules checked on a model-answered decision (model - model, none): "
              f"{p50['model'] - p50['model, none']:+.3f} ms")
        print(f"screen rule over the route's own cost (screen rule - refused): "
              f"{p50['screen rule'] - p50['refused']:+.3f} ms")
        print("target: < 1 ms added")


async def main(args: argparse.Namespace) -> None:
    up_port, worker_port = free_port(), free_port()
    upstream_proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, __file__, "--serve", str(up_port)])
    database_url = await create_pg_database()
    worker_proc = None
    with tempfile.TemporaryDirectory() as workdir:
        try:
            wait_port(up_port, upstream_proc, "upstream")
            worker_proc = start_worker(worker_port, f"http://127.0.0.1:{up_port}/v1",
                                       database_url, workdir)
            wait_port(worker_port, worker_proc, "worker")
            await load(args, f"http://127.0.0.1:{worker_port}")
        finally:
            for proc in (worker_proc, upstream_proc):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=15)
            await drop_pg_database(database_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    ns = parser.parse_args()
    if ns.serve:
        serve_fixed(ns.serve, REPLY)
    else:
        import uvloop

        uvloop.install()
        asyncio.run(main(ns))
