"""Benchmark `GET /api/admin/usage` and `GET /api/admin/calls/{call_id}` over 1,000,000
call-log records on PostgreSQL.

    .venv/bin/python bench/bench_usage.py [--records 1000000] [--runs 20]

A fresh database (created and dropped here) gets `--records` records over 30 days (20 service
keys, 10 campaigns, 3 tiers, 6 configurations, about 10 model calls per phone call), written
the way the call log's writer writes them (`DiagnosticsRecorder._insert`: COPY plus the daily
summary's upsert, in batches of 10,000). Then the app (in this process, over ASGI, with its
lifespan) answers the usage endpoint for each `group_by` over the 30 days, `--runs` times
each: median and p95 in ms. Beside it, the baseline: the same grouping computed from the
records themselves (`GROUP BY` over `llm_call_logs`), which is what the summary spares.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PG_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432"
ADMIN = {"Authorization": "Bearer bench-admin-token"}


async def fill(url: str, total: int) -> None:
    from callout_server.calllog.recorder import DiagnosticsRecorder
    from callout_server.calllog.records import CallRecord
    from callout_server.db.engine import Database

    rng = random.Random(25)
    db = Database(url)
    recorder = DiagnosticsRecorder(db)
    start = datetime.now(UTC) - timedelta(days=30)
    step = timedelta(days=30) / total
    batch: list[CallRecord] = []
    t0 = time.perf_counter()
    for i in range(total):
        key = rng.randrange(20)
        prompt, completion = rng.randrange(150, 900), rng.randrange(10, 120)
        batch.append(CallRecord(
            id=i + 1, at=start + step * i, tier=rng.choice(("nlu", "nlu", "chat", "script")),
            code="ok" if rng.random() > 0.02 else "upstream_timeout",
            config_id=rng.randrange(1, 7), model="qwen3.5-2b", vendor="vllm",
            latency_ms=rng.lognormvariate(5.2, 0.5), prompt_tokens=prompt,
            completion_tokens=completion, call_id=f"c-{i // 10:07d}", node_id=f"n{i % 10}",
            key_id=key + 1, campaign=f"campaign-{key % 10}",
            cost=(prompt * 0.8 + completion * 2.4) / 1e6, currency="CNY"))
        if len(batch) == 10_000:
            await recorder._insert(batch)
            batch = []
    if batch:
        await recorder._insert(batch)
    print(f"wrote {total:,} records (and their daily summary) in "
          f"{time.perf_counter() - t0:.1f} s")
    await db.dispose()


async def measure(url: str, runs: int, total: int) -> None:
    import httpx
    from sqlalchemy import text

    from callout_server.app import create_app
    from callout_server.config.settings import load_settings
    from callout_server.db.engine import Database

    env = {"CALLOUT_CONFIG": str(ROOT / "config.toml"), "CALLOUT_DATABASE_URL": url,
           "CALLOUT_ADMIN_TOKEN": "bench-admin-token", "CALLOUT_SERVICE_TOKEN": "bench-svc",
           "CALLOUT_ADMIN_USER": "admin", "CALLOUT_ADMIN_PASSWORD": "bench-admin-pass",
           "CALLOUT_SECRET_KEY": "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA="}
    app = create_app(load_settings(ROOT / "config.toml", env=env))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://b") as client:
            since = (datetime.now(UTC) - timedelta(days=31)).date().isoformat()
            print(f"{'request':<44} | {'median ms':>9} | {'p95 ms':>7} | items")
            print("-" * 74)
            for group_by in ("day", "key", "campaign", "config", "tier"):
                params = {"group_by": group_by, "since": since}
                times, items = [], 0
                for _ in range(runs + 2):
                    t = time.perf_counter()
                    r = await client.get("/api/admin/usage", headers=ADMIN, params=params)
                    times.append((time.perf_counter() - t) * 1000)
                    assert r.status_code == 200, r.text
                    items = len(r.json()["items"])
                times = sorted(times[2:])
                print(f"{'GET /api/admin/usage?group_by=' + group_by:<44} | "
                      f"{statistics.median(times):>9.1f} | {times[int(0.95 * len(times)) - 1]:>7.1f} | {items}")
            times = []
            for i in range(runs):
                call_id = f"c-{(i * 7919) % (total // 10):07d}"
                t = time.perf_counter()
                r = await client.get(f"/api/admin/calls/{call_id}", headers=ADMIN)
                times.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200 and r.json()["totals"]["model_calls"] == 10, r.text
            times.sort()
            print(f"{'GET /api/admin/calls/{call_id} (10 records)':<44} | "
                  f"{statistics.median(times):>9.1f} | {times[int(0.95 * len(times)) - 1]:>7.1f} | 10")
    db = Database(url)
    times = []
    for _ in range(3):
        async with db.session() as s:
            t = time.perf_counter()
            await s.execute(text(
                "SELECT campaign, count(*), sum(prompt_tokens), sum(completion_tokens), "
                "sum(cost), percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) "
                "FROM callout.llm_call_logs WHERE at >= now() - interval '31 days' "
                "GROUP BY campaign"))
            times.append((time.perf_counter() - t) * 1000)
    await db.dispose()
    print(f"{'baseline: GROUP BY campaign over the records':<44} | "
          f"{statistics.median(times):>9.1f} | {max(times):>7.1f} |")


async def main(args: argparse.Namespace) -> None:
    import asyncpg

    from callout_server.db.migrate import upgrade_to_head

    name = f"callout_bench_{secrets.token_hex(4)}"
    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    url = f"{PG_SERVER}/{name}"
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        await fill(url, args.records)
        conn = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}")
        await conn.execute("ANALYZE")
        rows = await conn.fetchval("SELECT count(*) FROM callout.usage_daily")
        await conn.close()
        print(f"usage_daily: {rows:,} summary rows for {args.records:,} records; "
              f"runs={args.runs} cpus={os.cpu_count()}")
        await measure(url, args.runs, args.records)
    finally:
        conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args()))
