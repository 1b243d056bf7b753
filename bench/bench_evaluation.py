"""Benchmark shadow evaluation: how long 1,000 replays take, and what they cost live traffic.

    .venv/bin/python bench/bench_evaluation.py [--calls 1000] [--rate 100] [--rounds 4]
        [--candidate-ms 50]

Processes:
  upstream  the fixed-answer server of bench_nlu.py (the live model: answers at once)
  emulator  `python -m callout_server.emulator`: the candidate, every answer delayed by
            `--candidate-ms` (a script with `ttft_ms`, the emulator's latency option), the
            decision itself from its NLU persona
  workers   two identical uvicorn workers (`callout_server.app:create_app`, uvloop +
            httptools, the call log on one fresh PostgreSQL database, created and dropped
            here), default `[evaluation] concurrency` (4)
  this      the load generator

First `--calls` live decisions are sent through `/api/nlu/decide` (they are the recorded
traffic), and the candidate is stored as an inactive nlu configuration. Then each round:
both workers take the same open-loop live load, `POST /api/nlu/decide` at `--rate` per
second each (sent on schedule whether or not earlier ones have answered, as dialers do),
while ONE of them (the two take turns) replays the `--calls` most recent decisions against
the candidate until the evaluation is `done` (polled once a second, as the console does).
The worker without the evaluation is the control, measured over the same seconds: on a
machine shared with other work, phases run one after the other measured the machine's
other load more than the evaluation (p99 of the same phase swung 20-400 ms between rounds).
Reported: the evaluation's time to finish, live p50/p99 and CPU of the worker with and
without the evaluation (all rounds pooled), and each round's p99 pair.
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


async def load(args: argparse.Namespace, workers: list[tuple[str, int]], emulator: str) -> None:
    model = f"qwen3.5-2b-bench-{os.getpid()}"
    first = workers[0][0]
    # Bounded like a dialer's pool: beyond it, requests wait for a connection (and that
    # wait counts in their latency) instead of opening thousands of sockets.
    connector = aiohttp.TCPConnector(limit=512, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as http:
        async with http.post(f"{emulator}/_emulator/scripts", json={
                "match": {"model": model, "persona": None}, "times": None,
                "reply": {"ttft_ms": args.candidate_ms}}) as r:
            assert r.status == 201, await r.text()
        async with http.post(f"{first}/api/admin/llm-configs", headers=ADMIN, data=orjson.dumps({
                "tier": "nlu", "name": "bench-candidate", "base_url": f"{emulator}/vllm/v1",
                "api_key": "", "model": model, "is_active": False})) as r:
            candidate_id = (await r.json())["id"]
        await seed(http, first, args.calls)
        await asyncio.sleep(2.0)  # the call log's writer has the inputs in the database

        print(f"calls={args.calls} live rate={args.rate}/s per worker candidate="
              f"{args.candidate_ms:g} ms rounds={args.rounds} cpus={os.cpu_count()} "
              f"load average at start {os.getloadavg()[0]:.1f}")
        sides = ("without an evaluation", "with an evaluation")
        lats: dict[str, list[float]] = {side: [] for side in sides}
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        failed = dict.fromkeys(sides, 0)
        pairs: list[tuple[float, float]] = []
        took: list[float] = []
        for n in range(args.rounds):
            busy = n % 2  # the workers take turns, so neither's own quirks decide
            stop = asyncio.Event()
            lives = [Live(http, url, args.rate) for url, _ in workers]
            runners = [asyncio.create_task(live.run(stop)) for live in lives]
            before, wall = [cpu_s(pid) for _, pid in workers], time.perf_counter()
            await asyncio.sleep(1.0)  # both under live load before the evaluation starts
            took.append(await evaluate(http, workers[busy][0], candidate_id, args.calls))
            stop.set()
            await asyncio.gather(*runners)
            elapsed = time.perf_counter() - wall
            p99 = {}
            for i, (live, (_, pid)) in enumerate(zip(lives, workers, strict=True)):
                side = sides[i == busy]
                lats[side].extend(live.latencies)
                failed[side] += live.failed
                cpu[side].append((cpu_s(pid) - before[i]) / elapsed)
                p99[side] = pct(live.latencies, 0.99)
            pairs.append((p99[sides[0]], p99[sides[1]]))
            if args.verbose:
                print(f"  round {n + 1}: p99 {pairs[-1][0]:.1f} / {pairs[-1][1]:.1f} ms, "
                      f"evaluation {took[-1]:.1f} s on worker {busy + 1}, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"evaluation of {args.calls} calls: {statistics.median(took):.1f} s median "
              f"({', '.join(f'{t:.1f}' for t in took)}); "
              f"{args.calls / statistics.median(took):.0f} replays/s")
        print(f"{'live decisions on the worker':<38} | {'n':>6} | {'p50 ms':>7} | "
              f"{'p99 ms':>7} | {'CPU':>5}")
        print("-" * 75)
        for side in sides:
            print(f"{side:<38} | {len(lats[side]):>6} | {statistics.median(lats[side]):>7.2f} | "
                  f"{pct(lats[side], 0.99):>7.2f} | {statistics.median(cpu[side]) * 100:>4.0f}%"
                  + (f"  ({failed[side]} failed)" if failed[side] else ""))
        a, b = (pct(lats[side], 0.99) for side in sides)
        print(f"live p99 with an evaluation running: {(b / a - 1) * 100:+.1f} % (all rounds)")
        print("per round, p99 without / with ms: "
              + ", ".join(f"{x:.1f} / {y:.1f}" for x, y in pairs)
              + f"; median ratio {(statistics.median(y / x for x, y in pairs) - 1) * 100:+.1f} %")
        print(f"load average at end {os.getloadavg()[0]:.1f}")
        print(GOAL)


def evaluation_settings(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    """A config.toml with other [evaluation] values, when asked for (to compare settings)."""
    values = {k: v for k, v in (("concurrency", args.concurrency), ("max_rate", args.max_rate),
                                ("busy_lag_ms", args.busy_lag_ms)) if v is not None}
    if not values:
        return {}
    text = (ROOT / "config.toml").read_text()
    head, _, tail = text.partition("[evaluation]")
    lines = [f"{k} = {v}" for k, v in values.items()]
    tail = "\n".join(ln for ln in tail.splitlines() if ln.split("=")[0].strip() not in values)
    path = workdir / "config.toml"
    path.write_text(head + "[evaluation]\n" + "\n".join(lines) + tail + "\n")
    print(f"[evaluation] {', '.join(lines)}")
    return {"CALLOUT_CONFIG": str(path)}


async def main(args: argparse.Namespace) -> None:
    up_port = free_port()
    upstream_proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, __file__, "--serve", str(up_port)])
    emulator_proc, emulator = start_emulator()
    database_url = await create_pg_database()
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as workdir:
        try:
            wait_port(up_port, upstream_proc, "upstream")
            workers = []
            env = evaluation_settings(args, Path(workdir))
            for _ in range(2):
                port = free_port()
                proc = start_worker(port, f"http://127.0.0.1:{up_port}/v1", database_url, workdir,
                                    **env)
                procs.append(proc)
                wait_port(port, proc, "worker")
                workers.append((f"http://127.0.0.1:{port}", proc.pid))
            await load(args, workers, emulator)
        finally:
            for proc in [*procs, upstream_proc, emulator_proc]:
                proc.terminate()
                proc.wait(timeout=15)
            await drop_pg_database(database_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--candidate-ms", type=float, default=50.0)
    parser.add_argument("--verbose", action="store_true", help="a line per round")
    parser.add_argument("--concurrency", type=int, help="[evaluation] concurrency (default: config.toml)")
    parser.add_argument("--busy-lag-ms", type=float, help="[evaluation] busy_lag_ms (default: config.toml)")
    parser.add_argument("--max-rate", type=float, help="[evaluation] max_rate (default: config.toml)")
    ns = parser.parse_args()
    if ns.serve:
        serve_fixed(ns.serve, REPLY)
    else:
        import uvloop

        uvloop.install()
        asyncio.run(main(ns))
