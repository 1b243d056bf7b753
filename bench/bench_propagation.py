"""Configuration propagation across two real workers: change on A, time until B serves it.

    .venv/bin/python bench/bench_propagation.py [--changes 50] [--poll-changes 20]
        [--poll-interval 1.0] [--pg postgresql+asyncpg://postgres@127.0.0.1:5432]
        [--redis redis://127.0.0.1:6379/0]

Creates a scratch database (dropped afterwards), migrates it, and starts two uvicorn
workers (`callout_server.app:create_app`) on it. For each change: PUT an active
configuration through worker A, while a task polls worker B's `/healthz` back to back;
the figure is the time from sending the PUT to B first reporting the new
`config_generation` (so it includes A's write). Mode 1: PostgreSQL + Redis pub/sub.
Mode 2: no Redis, B catches up by polling `config_state` every `--poll-interval` s.
Goal (issue 3): p99 < 1000 ms with Redis, < the poll interval without.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
import httpx  # noqa: E402

from callout_server.db.migrate import upgrade_to_head  # noqa: E402

ADMIN = {"Authorization": "Bearer bench-admin-token-0123456789"}
SECRET_KEY = "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA="  # scratch database only


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_worker(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith("CALLOUT_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "callout_server.app:create_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--loop", "uvloop", "--http", "httptools", "--no-access-log"],
        env={**base, **env}, cwd=ROOT, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}"


async def wait_ready(client: httpx.AsyncClient, url: str) -> None:
    for _ in range(300):
        try:
            if (await client.get(f"{url}/healthz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)
    raise TimeoutError(url)


async def generation(client: httpx.AsyncClient, url: str) -> int:
    return int((await client.get(f"{url}/healthz")).json()["config_generation"])


async def run_mode(label: str, db_url: str, redis_url: str, changes: int,
                   poll_interval: float, logdir: Path) -> list[float]:
    env = {
        "CALLOUT_CONFIG": str(ROOT / "config.toml"), "CALLOUT_DATABASE_URL": db_url,
        "CALLOUT_ADMIN_TOKEN": ADMIN["Authorization"].split()[1],
        "CALLOUT_SERVICE_TOKEN": "bench-service-token-0123456789",
        "CALLOUT_ADMIN_USER": "admin", "CALLOUT_ADMIN_PASSWORD": "bench-pass-123",
        "CALLOUT_SECRET_KEY": SECRET_KEY, "CALLOUT_POLL_INTERVAL_S": str(poll_interval),
        "CALLOUT_REDIS_CHANNEL_PREFIX": f"bench-{secrets.token_hex(4)}",
    }
    if redis_url:
        env["CALLOUT_REDIS_URL"] = redis_url
    procs = [start_worker(env, logdir / f"{label}-{n}.log") for n in ("a", "b")]
    (_, a), (_, b) = procs
    latencies: list[float] = []
    write_ms: list[float] = []
    after_ack: list[float] = []
    try:
        async with httpx.AsyncClient(timeout=10) as ca, httpx.AsyncClient(timeout=10) as cb:
            await wait_ready(ca, a)
            await wait_ready(cb, b)
            r = await ca.post(f"{a}/api/admin/llm-configs", headers=ADMIN, json={
                "tier": "nlu", "name": f"bench-{label}", "base_url": "http://127.0.0.1:8900/v1",
                "model": "qwen3.5-2b", "is_active": True})
            r.raise_for_status()
            cid, version = r.json()["id"], r.json()["version"]
            start = await generation(ca, a)
            while await generation(cb, b) < start:  # noqa: ASYNC110 - polling another process
                await asyncio.sleep(0.01)
            for i in range(changes):
                target = await generation(ca, a) + 1
                seen = asyncio.get_running_loop().create_future()

                async def watch(target: int = target, seen: asyncio.Future[float] = seen) -> None:
                    while await generation(cb, b) < target:  # noqa: ASYNC110 - another process
                        # 2 ms apart: tight, without starving A of the (2) CPU cores.
                        await asyncio.sleep(0.002)
                    seen.set_result(time.perf_counter())

                watcher = asyncio.create_task(watch())
                t0 = time.perf_counter()
                r = await ca.put(f"{a}/api/admin/llm-configs/{cid}", headers=ADMIN,
                                 json={"version": version, "max_tokens": 100 + i})
                r.raise_for_status()
                version = r.json()["version"]
                acked = time.perf_counter()
                served = await asyncio.wait_for(seen, 30)
                latencies.append((served - t0) * 1000)
                write_ms.append((acked - t0) * 1000)
                after_ack.append(max(0.0, served - acked) * 1000)
                await watcher
                # A random gap: changes must not fall in step with B's poll ticks.
                await asyncio.sleep(random.uniform(0.02, poll_interval))
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(10)
    report(f"  {label}: PUT round trip on A", write_ms)
    report(f"  {label}: A's 200 -> B serves", after_ack)
    return latencies


def report(label: str, ms: list[float]) -> None:
    ordered = sorted(ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(f"{label:<34} n={len(ms):<4} median {statistics.median(ms):8.1f} ms   "
          f"p99 {p99:8.1f} ms   max {ordered[-1]:8.1f} ms")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--changes", type=int, default=50)
    ap.add_argument("--poll-changes", type=int, default=20)
    ap.add_argument("--poll-interval", type=float, default=1.0)
    ap.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432")
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = ap.parse_args()

    name = f"callout_bench_{secrets.token_hex(4)}"
    dsn = args.pg.replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(f"{dsn}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    db_url = f"{args.pg}/{name}"
    try:
        await asyncio.to_thread(upgrade_to_head, db_url)
        with tempfile.TemporaryDirectory() as tmp:
            redis_ms = await run_mode("redis", db_url, args.redis, args.changes,
                                      args.poll_interval, Path(tmp))
            poll_ms = await run_mode("poll", db_url, "", args.poll_changes,
                                     args.poll_interval, Path(tmp))
        report("PostgreSQL + Redis pub/sub", redis_ms)
        report(f"no Redis, polling every {args.poll_interval:g} s", poll_ms)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())
