"""Worker CPU per decision under different HTTP servers, at a fixed request rate, side by side.

    .venv/bin/pip install granian      # for granian-direct; not a project dependency
    .venv/bin/python bench/bench_servers.py [--servers uvicorn-direct,granian-direct] [--rate 400]
                                            [--seconds 4] [--rounds 6] [--workers 1]

One fixed-answer upstream and one callout-server worker per server (bench_peers.py's
`start_ours`: `uvicorn` is `callout-server serve` itself, `uvicorn-direct` and `granian-direct`
the same app factory under each server with serve's settings; all on one PostgreSQL database); then, round
after round with the servers in rotating order, `--rate` decisions a second (open loop: sent on
a schedule, at most 256 outstanding, as dialers send them) to one server at a time. Closed-loop
saturation on a shared 2-core machine mostly measures who wins the cores; at a rate every
server keeps up with, the CPU each one spends per decision is what differs. Prints, per
server: worker CPU ms per decision per round, the median, p50/p99 latency and errors.
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
from bench_nlu import DECIDE, SERVICE_TOKEN, create_pg_database, drop_pg_database
from bench_peers import pct, start_ours, tree_cpu_s
from loadgen import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


async def at_rate(http: aiohttp.ClientSession, url: str, rate: float, seconds: float
                  ) -> tuple[list[float], int]:
    body = orjson.dumps(DECIDE)
    headers = {"content-type": "application/json", "authorization": f"Bearer {SERVICE_TOKEN}"}
    lat: list[float] = []
    errors = 0
    gate = asyncio.Semaphore(256)

    async def one() -> None:
        nonlocal errors
        async with gate:
            t0 = time.perf_counter()
            try:
                async with http.post(url, data=body, headers=headers) as r:
                    data = await r.read()
                    ok = r.status == 200 and b'"fallback":false' in data
            except aiohttp.ClientError:
                ok = False
            if ok:
                lat.append((time.perf_counter() - t0) * 1000)
            else:
                errors += 1

    tasks = []
    start = time.perf_counter()
    for i in range(int(rate * seconds)):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one()))
    await asyncio.gather(*tasks)
    return lat, errors


async def run(args: argparse.Namespace) -> None:
    database_url = await create_pg_database()
    procs: list[subprocess.Popen[bytes]] = []
    workdir = tempfile.mkdtemp()
    try:
        up_port = free_port()
        upstream = subprocess.Popen(  # noqa: ASYNC220 - nothing runs on the loop yet
            [sys.executable, str(ROOT / "bench" / "bench_nlu.py"), "--serve", str(up_port)])
        procs.append(upstream)
        wait_port(up_port, upstream, "upstream")
        servers: list[tuple[str, str, int]] = []
        for name in args.servers.split(","):
            port = free_port()
            proc = start_ours(port, f"http://127.0.0.1:{up_port}/v1", database_url, workdir,
                              args.workers, name)
            procs.append(proc)
            wait_port(port, proc, name, timeout_s=60)
            servers.append((name, f"http://127.0.0.1:{port}/api/nlu/decide", proc.pid))
        cpu: dict[str, list[float]] = {name: [] for name, _, _ in servers}
        lat: dict[str, list[float]] = {name: [] for name, _, _ in servers}
        errors = dict.fromkeys(cpu, 0)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            for _, url, _ in servers:  # warm-up
                await at_rate(http, url, args.rate, 1.0)
            print(f"# {args.rate:.0f} decisions/s for {args.seconds} s per segment, "
                  f"{args.rounds} rounds, workers={args.workers}, load average "
                  f"{os.getloadavg()[0]:.1f} at start", flush=True)
            for r in range(args.rounds):
                order = servers[r % len(servers):] + servers[:r % len(servers)]
                for name, url, pid in order:
                    await asyncio.sleep(0.2)
                    before = tree_cpu_s(pid)
                    got, bad = await at_rate(http, url, args.rate, args.seconds)
                    await asyncio.sleep(0.3)  # the call log's batched write belongs here
                    cpu[name].append(1000 * (tree_cpu_s(pid) - before) / max(len(got), 1))
                    lat[name] += got
                    errors[name] += bad
        print("| server | worker CPU ms per decision (median) | per round | p50 ms | p99 ms | errors |")
        print("|---|---:|---|---:|---:|---:|")
        base = statistics.median(cpu[servers[0][0]])
        for name, _, _ in servers:
            med = statistics.median(cpu[name])
            print(f"| {name} | **{med:.3f}** ({med / base:.2f}x) | "
                  + " / ".join(f"{x:.3f}" for x in cpu[name])
                  + f" | {pct(lat[name], .5):.2f} | {pct(lat[name], .99):.2f} | {errors[name]} |")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        await drop_pg_database(database_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="uvicorn-direct,granian-direct")
    parser.add_argument("--rate", type=float, default=400)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--workers", type=int, default=1)
    import uvloop

    uvloop.run(run(parser.parse_args()))
