"""Benchmark shadow evaluation: how long 1,000 replays take, and what they cost live traffic.

    .venv/bin/python bench/bench_evaluation.py [--calls 1000] [--rate 200] [--rounds 3]
        [--candidate-ms 50]

Processes:
  upstream  the fixed-answer server of bench_nlu.py (the live model: answers at once)
  emulator  `python -m callout_server.emulator`: the candidate, every answer delayed by
            `--candidate-ms` (a script with `ttft_ms`, the emulator's latency option), the
            decision itself from its NLU persona
  worker    one uvicorn worker (`callout_server.app:create_app`, uvloop + httptools, the
            call log on a fresh PostgreSQL database, created and dropped here), default
            `[evaluation] concurrency` (4)
  this      the load generator

First `--calls` live decisions are sent through `/api/nlu/decide` (they are the recorded
traffic), and the candidate is stored as an inactive nlu configuration. Then, for each round,
two phases in turn, the same live load in both: an open-loop stream of `POST
/api/nlu/decide` at `--rate` per second (requests are sent on schedule whether or not the
earlier ones have answered, as dialers do):
  A  live traffic alone, for as long as the previous evaluation took (12 s the first time)
  B  live traffic while an evaluation replays the `--calls` most recent decisions against
     the candidate, until it is `done` (polled once a second, as the console does)
Reported: the evaluation's time to finish (median of rounds) and the live p50/p99 of each
phase over all rounds, and the worker's CPU per second in each phase.
Goal (issue 15): live p99 during an evaluation within 10 % of the p99 without.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from bench_nlu import (
    DECIDE,
    REPLY,
    SERVICE_TOKEN,
    cpu_s,
    create_pg_database,
    drop_pg_database,
    start_worker,
)
from loadgen import free_port, pct, serve_fixed, wait_port

ROOT = Path(__file__).resolve().parents[1]
ADMIN = {"authorization": "Bearer bench-admin-token", "content-type": "application/json"}
SERVICE = {"authorization": f"Bearer {SERVICE_TOKEN}", "content-type": "application/json"}
GOAL = "goal: live p99 during an evaluation within 10 % of the p99 without"


def start_emulator() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "callout_server.emulator", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError(f"emulator failed to start: {line!r}")
    return proc, line.rsplit(" ", 1)[-1].strip()


class Live:
    """Open-loop decisions at a fixed rate; latencies of the ones sent while `on`."""

    def __init__(self, http: aiohttp.ClientSession, worker: str, rate: float) -> None:
        self._http, self._worker, self._rate = http, worker, rate
        self.latencies: list[float] = []
        self.failed = 0
        self._n = 0

    async def _one(self) -> None:
        self._n += 1
        body = orjson.dumps({**DECIDE, "call_id": f"live-{self._n}",
                             "node_id": f"node-{self._n % 5}"})
        start = time.perf_counter()
        try:
            async with self._http.post(f"{self._worker}/api/nlu/decide", data=body,
                                       headers=SERVICE) as r:
                await r.read()
        except aiohttp.ClientError:
            self.failed += 1
            return
        if r.status == 200:
            self.latencies.append((time.perf_counter() - start) * 1000.0)
        else:
            self.failed += 1

    async def run(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        start, i, tasks = loop.time(), 0, set()
        while not stop.is_set():
            i += 1
            delay = start + i / self._rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(self._one())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)


async def seed(http: aiohttp.ClientSession, worker: str, calls: int) -> None:
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            body = orjson.dumps({**DECIDE, "call_id": f"seed-{i}", "node_id": f"node-{i % 5}"})
            async with http.post(f"{worker}/api/nlu/decide", data=body, headers=SERVICE) as r:
                assert r.status == 200, await r.text()

    await asyncio.gather(*(one(i) for i in range(calls)))


async def evaluate(http: aiohttp.ClientSession, worker: str, candidate_id: int,
                   calls: int) -> float:
    started = time.perf_counter()
    async with http.post(f"{worker}/api/admin/evaluations", headers=ADMIN,
                         data=orjson.dumps({"candidate_id": candidate_id, "limit": calls})) as r:
        body = await r.json()
    assert r.status == 202, body
    while True:
        await asyncio.sleep(1.0)
        async with http.get(f"{worker}/api/admin/evaluations/{body['id']}",
                            headers=ADMIN) as r:
            state = await r.json()
        if state["status"] != "running":
            assert state["status"] == "done", state
            assert state["progress"] == {"done": calls, "total": calls}, state["progress"]
            return time.perf_counter() - started


async def load(args: argparse.Namespace, worker: str, worker_pid: int, emulator: str) -> None:
    model = f"qwen3.5-2b-bench-{os.getpid()}"
    # Bounded like a dialer's pool: beyond it, requests wait for a connection (and that
    # wait counts in their latency) instead of opening thousands of sockets.
    connector = aiohttp.TCPConnector(limit=256, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as http:
        async with http.post(f"{emulator}/_emulator/scripts", json={
                "match": {"model": model, "persona": None}, "times": None,
                "reply": {"ttft_ms": args.candidate_ms}}) as r:
            assert r.status == 201, await r.text()
        async with http.post(f"{worker}/api/admin/llm-configs", headers=ADMIN, data=orjson.dumps({
                "tier": "nlu", "name": "bench-candidate", "base_url": f"{emulator}/vllm/v1",
                "api_key": "", "model": model, "is_active": False})) as r:
            candidate_id = (await r.json())["id"]
        await seed(http, worker, args.calls)
        await asyncio.sleep(2.0)  # the call log's writer has the inputs in the database

        print(f"calls={args.calls} live rate={args.rate}/s candidate={args.candidate_ms:g} ms "
              f"rounds={args.rounds} cpus={os.cpu_count()}")
        phases: dict[str, list[float]] = {"A live alone": [], "B live + evaluation": []}
        cpu: dict[str, list[float]] = {name: [] for name in phases}
        failed = dict.fromkeys(phases, 0)
        took: list[float] = []
        duration = 12.0
        for _ in range(args.rounds):
            for name in phases:
                live, stop = Live(http, worker, args.rate), asyncio.Event()
                runner = asyncio.create_task(live.run(stop))
                cpu_before, wall = cpu_s(worker_pid), time.perf_counter()
                if name.startswith("A"):
                    await asyncio.sleep(duration)
                else:
                    duration = await evaluate(http, worker, candidate_id, args.calls)
                    took.append(duration)
                stop.set()
                await runner
                cpu[name].append((cpu_s(worker_pid) - cpu_before) / (time.perf_counter() - wall))
                phases[name].extend(live.latencies)
                failed[name] += live.failed
        print(f"evaluation of {args.calls} calls: {statistics.median(took):.1f} s median "
              f"({', '.join(f'{t:.1f}' for t in took)}); "
              f"{args.calls / statistics.median(took):.0f} replays/s")
        print(f"{'phase':<22} | {'decisions':>9} | {'p50 ms':>7} | {'p99 ms':>7} | "
              f"{'worker CPU':>10}")
        print("-" * 68)
        for name, lats in phases.items():
            print(f"{name:<22} | {len(lats):>9} | {statistics.median(lats):>7.2f} | "
                  f"{pct(lats, 0.99):>7.2f} | {statistics.median(cpu[name]) * 100:>9.0f}%"
                  + (f"  ({failed[name]} failed)" if failed[name] else ""))
        a, b = (pct(lats, 0.99) for lats in phases.values())
        print(f"live p99 with an evaluation running: {(b / a - 1) * 100:+.1f} %")
        print(GOAL)


async def main(args: argparse.Namespace) -> None:
    up_port, worker_port = free_port(), free_port()
    upstream_proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, __file__, "--serve", str(up_port)])
    emulator_proc, emulator = start_emulator()
    database_url = await create_pg_database()
    worker_proc = None
    with tempfile.TemporaryDirectory() as workdir:
        try:
            wait_port(up_port, upstream_proc, "upstream")
            worker_proc = start_worker(worker_port, f"http://127.0.0.1:{up_port}/v1",
                                       database_url, workdir)
            wait_port(worker_port, worker_proc, "worker")
            await load(args, f"http://127.0.0.1:{worker_port}", worker_proc.pid, emulator)
        finally:
            for proc in (worker_proc, upstream_proc, emulator_proc):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=15)
            await drop_pg_database(database_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--candidate-ms", type=float, default=50.0)
    ns = parser.parse_args()
    if ns.serve:
        serve_fixed(ns.serve, REPLY)
    else:
        import uvloop

        uvloop.install()
        asyncio.run(main(ns))
