"""Benchmark `POST /api/nlu/decide`: what one callout-server worker adds to a model call.

    .venv/bin/python bench/bench_nlu.py [--requests 2000] [--rounds 5] [--db postgres|sqlite]

Three processes:
  upstream  a minimal aiohttp server on uvloop answering every POST with one fixed chat
            completion whose content is a valid decision (faster than the emulator, which
            scripts and records every request: we measure the worker, not the fake vendor)
  worker    one `uvicorn callout_server.app:create_app --factory` with uvloop + httptools and
            no access log, as `callout-server serve` runs it; the NLU tier points at the
            upstream; the call-log recorder is on and writes to a fresh PostgreSQL database
            (`--db postgres`, the default, created and dropped here) or to the embedded
            SQLite file (`--db sqlite`)
  this      the load generator: one aiohttp session on uvloop

The same decisions are sent (a) bare, straight to the upstream, with the exact request body
the worker sends, and (b) through `/api/nlu/decide`. For each concurrency (1, 16 and 64
requests in flight) a and b alternate in rounds, so machine drift hits both alike; req/s is
the median of the rounds, p50/p99 are over all of a variant's requests, and "added" is b - a.
"worker CPU" is the worker process's own CPU time (user + system, from /proc) per decision
during (b).

    .venv/bin/python bench/bench_nlu.py --keys [--requests 2000] [--rounds 5]

adds (c): the same decisions with a service key whose limits are all set (rpm, max_in_flight,
daily_tokens; high enough never to refuse), beside (b) with the environment's token, in the
same run and rounds: what the key lookup, the Redis limit check (one Lua script), the release
and the budget count add ("added by the key": c - b). The worker then runs with Redis.

    .venv/bin/python bench/bench_nlu.py --in-process --keys

measures what a limited key adds on its own, for a machine too busy for the figures above:
the key lookup (one HMAC and a dict probe) in CPU µs, and the limit check against the real
Redis (the Lua script before the request, the release after it, the batched budget count):
wall and CPU µs per request, median of 10 batches of 500 sequential requests.

    .venv/bin/python bench/bench_nlu.py --in-process

measures the tier's own work alone, for a machine too busy for the figures above: one
`NluService.decide()` (validation of the node, prompt, request shaping, parsing,
classification, extraction, the call-log record) with the HTTP round trip replaced by the
fixed answer, in CPU µs per decision, min and median of 12 batches of 3,000.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp
import orjson
from loadgen import free_port, pct, run_batch, serve_fixed, wait_port

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PG_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432"
SERVICE_TOKEN = "bench-service-token"
MODEL = "qwen3.5-2b"
DECISION = {"intent": "agree", "confidence": 0.93, "slots": {"time": "明天下午三点以后"}}
REPLY = orjson.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "model": MODEL,
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": orjson.dumps(DECISION).decode()}}],
    "usage": {"prompt_tokens": 230, "completion_tokens": 24, "total_tokens": 254},
})
DECIDE = {
    "call_id": "c-bench", "node_id": "confirm_time", "utterance": "明天下午三点以后都可以",
    "context": [{"role": "assistant", "content": "请问您什么时候方便接听回访？"}],
    "intents": [{"name": "agree", "description": "客户同意并给出时间"},
                {"name": "refuse", "description": "客户拒绝"}],
    "slots": [{"name": "time", "description": "客户方便的时间", "type": "string"}],
    "fallback_intent": "refuse", "deadline_ms": 1500,
}
GOALS = "goals: added p50 < 2 ms at 1 in flight; >= 800 decisions/s; added p99 < 100 ms at 64"


# -- the worker's database ------------------------------------------------------------------

async def create_pg_database() -> str:
    import asyncpg

    from callout_server.db.migrate import upgrade_to_head

    name = f"callout_bench_{secrets.token_hex(4)}"
    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = f"{PG_SERVER}/{name}"
    await asyncio.to_thread(upgrade_to_head, url)
    return url


async def drop_pg_database(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    finally:
        await conn.close()


def start_worker(port: int, upstream: str, database_url: str, workdir: str,
                 **extra_env: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLOUT_")}
    env.update({
        "CALLOUT_CONFIG": str(ROOT / "config.toml"),
        "CALLOUT_NLU_BASE_URL": upstream,
        "CALLOUT_SERVICE_TOKEN": SERVICE_TOKEN,
        "CALLOUT_ADMIN_TOKEN": "bench-admin-token",
        "CALLOUT_ADMIN_USER": "admin", "CALLOUT_ADMIN_PASSWORD": "bench-admin-pass",
        "CALLOUT_SECRET_KEY": "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA=",
    })
    if database_url:
        env["CALLOUT_DATABASE_URL"] = database_url
    env.update(extra_env)
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "callout_server.app:create_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop", "--http", "httptools",
         "--no-access-log", "--log-level", "warning"],
        env=env, cwd=workdir)


def upstream_body() -> bytes:
    """Exactly what the worker sends upstream for DECIDE (same builder, same config)."""
    from callout_server.llm.config import LLMConfig
    from callout_server.llm.request_body import build_request
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import llm_request

    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:1/v1", model=MODEL,
                    max_tokens=300, temperature=0.1)
    node = DecideRequest.model_validate(DECIDE)
    req = llm_request(node)  # as NluService does
    return orjson.dumps(build_request(cfg, req, stream=False).body)


# -- the load generator ---------------------------------------------------------------------

def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def create_limited_key(worker: str) -> str:
    """A service key with every limit set, high enough never to refuse (the bench's load)."""
    body = {"name": "bench", "tiers": ["nlu"], "campaign": "bench", "rpm": 1_000_000,
            "max_in_flight": 100_000, "daily_tokens": 10**12}
    async with aiohttp.ClientSession() as http, http.post(
            f"{worker}/api/admin/service-keys", json=body,
            headers={"authorization": "Bearer bench-admin-token"}) as r:
        assert r.status == 201, await r.text()
        return str((await r.json())["key"])


async def load(args: argparse.Namespace, upstream: str, worker: str, worker_pid: int) -> None:
    bare_body = upstream_body()
    decide_body = orjson.dumps(DECIDE)
    json_ct = {"content-type": "application/json"}
    bare_headers = {**json_ct, "authorization": "Bearer sk-bench"}
    decide_headers = {**json_ct, "authorization": f"Bearer {SERVICE_TOKEN}"}
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as http:
        async def bare() -> None:
            async with http.post(f"{upstream}/chat/completions", data=bare_body,
                                 headers=bare_headers) as r:
                data = await r.read()
            assert r.status == 200 and orjson.loads(data)["choices"]

        async def through() -> None:
            async with http.post(f"{worker}/api/nlu/decide", data=decide_body,
                                 headers=decide_headers) as r:
                data = await r.read()
            assert r.status == 200, data
            got = orjson.loads(data)
            assert got["intent"] == "agree" and not got["fallback"], got

        variants = {"a bare upstream": bare, "b /api/nlu/decide": through}
        if args.keys:
            key_headers = {**json_ct, "authorization": f"Bearer {await create_limited_key(worker)}"}

            async def keyed() -> None:
                async with http.post(f"{worker}/api/nlu/decide", data=decide_body,
                                     headers=key_headers) as r:
                    data = await r.read()
                assert r.status == 200, data

            variants["c key with limits"] = keyed
        for call in variants.values():  # warm-up: connections, caches, the worker's imports
            await run_batch(call, 500, 16)

        print(f"loop=uvloop db={args.db} requests/variant/round={args.requests} "
              f"rounds={args.rounds} cpus={os.cpu_count()}")
        print(f"{'in flight':>9} | {'variant':<20} | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7}")
        print("-" * 62)
        for inflight in (1, 16, 64):
            n = max(300, args.requests // 4) if inflight == 1 else args.requests
            rps: dict[str, list[float]] = {name: [] for name in variants}
            lats: dict[str, list[float]] = {name: [] for name in variants}
            cpu = 0.0
            for _ in range(args.rounds):
                for name, call in variants.items():
                    before = cpu_s(worker_pid)
                    elapsed, latencies = await run_batch(call, n, inflight)
                    if not name.startswith("a"):
                        cpu += cpu_s(worker_pid) - before
                    rps[name].append(n / elapsed)
                    lats[name].extend(latencies)
            p50 = {name: statistics.median(lats[name]) for name in variants}
            p99 = {name: pct(lats[name], 0.99) for name in variants}
            for name in variants:
                print(f"{inflight:>9} | {name:<20} | {statistics.median(rps[name]):>7.0f} | "
                      f"{p50[name]:>7.2f} | {p99[name]:>7.2f}")
            a, b, *c = variants
            print(f"{'':>9} | added by the worker: p50 {p50[b] - p50[a]:+.2f} ms, "
                  f"p99 {p99[b] - p99[a]:+.2f} ms; worker CPU "
                  f"{cpu * 1000 / (n * args.rounds * (1 + len(c))):.2f} ms/decision")
            if c:
                print(f"{'':>9} | added by the key: p50 {p50[c[0]] - p50[b]:+.3f} ms, "
                      f"p99 {p99[c[0]] - p99[b]:+.3f} ms")
            print("-" * 62)
        print(GOALS + ("; a limited key adds < 0.3 ms p50" if c else ""))


async def main(args: argparse.Namespace) -> None:
    up_port, worker_port = free_port(), free_port()
    # Spawning is quick; nothing else runs on this loop yet.
    upstream_proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, __file__, "--serve", str(up_port)])
    database_url = await create_pg_database() if args.db == "postgres" else ""
    worker_proc = None
    with tempfile.TemporaryDirectory() as workdir:  # the SQLite file lands here
        try:
            wait_port(up_port, upstream_proc, "upstream")
            upstream = f"http://127.0.0.1:{up_port}/v1"
            # Three variants take turns: a connection of one idles through the other two,
            # longer than the default keep-alive, so the worker keeps them open longer.
            redis = {"CALLOUT_REDIS_URL": "redis://127.0.0.1:6379/0",
                     "CALLOUT_REDIS_CHANNEL_PREFIX": f"bench-{secrets.token_hex(4)}",
                     "CALLOUT_KEEPALIVE_TIMEOUT_S": "120"}
            worker_proc = start_worker(worker_port, upstream, database_url, workdir,
                                       **(redis if args.keys else {}))
            wait_port(worker_port, worker_proc, "worker")
            await load(args, upstream, f"http://127.0.0.1:{worker_port}", worker_proc.pid)
        finally:
            for proc in (worker_proc, upstream_proc):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=15)
            if database_url:
                await drop_pg_database(database_url)


# -- the tier alone ---------------------------------------------------------------------------

async def in_process() -> None:
    import time

    from callout_server.llm import LLMClient, LLMConfig
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import NluService

    class FixedAnswer(LLMClient):
        async def _post(self, url: str, body: bytes, headers: dict[str, str], total: float
                        ) -> tuple[int, bytes, str | None]:
            return 200, REPLY, None

    class Recorder:  # queues nothing: the record is built, as on the hot path
        keeps_nlu_inputs = True  # the default: each decision hands over its inputs

        def record(self, rec: object) -> int:
            return 1

    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:1/v1", model=MODEL,
                    max_tokens=300, temperature=0.1)
    client = FixedAnswer()
    service = NluService(client, lambda: cfg, Recorder())  # type: ignore[arg-type]
    raw = orjson.dumps(DECIDE)

    async def decide() -> None:
        decision = await service.decide(DecideRequest.model_validate_json(raw))
        assert decision.intent == "agree" and not decision.fallback

    for _ in range(2000):
        await decide()
    per_call: list[float] = []
    for _ in range(12):
        start = time.process_time()
        for _ in range(3000):
            await decide()
        per_call.append((time.process_time() - start) / 3000 * 1e6)
    await client.aclose()
    print(f"NluService.decide() without I/O: min {min(per_call):.1f} µs, "
          f"median {statistics.median(per_call):.1f} µs CPU per decision")


async def keys_in_process() -> None:
    import time

    from callout_server.config.secrets import SecretBox
    from callout_server.service_keys.hashing import PURPOSE, KeyHasher, generate_key
    from callout_server.service_keys.limits import KeyLimiter
    from callout_server.service_keys.table import KeyTable, ServiceKey

    hasher = KeyHasher(SecretBox("RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA=").subkeys(PURPOSE))
    keys = {generate_key(): i for i in range(200)}
    table = KeyTable({hasher.digest(k): ServiceKey(
        id=i, name=f"k{i}", prefix=k[:10], tiers=frozenset({"nlu"}), rpm=1_000_000,
        max_in_flight=100_000, daily_tokens=10**12) for k, i in keys.items()})
    presented = next(iter(keys))
    start = time.process_time()
    for _ in range(100_000):
        key = table.lookup(hasher, presented)
    lookup_us = (time.process_time() - start) / 100_000 * 1e6
    assert key is not None
    limiter = KeyLimiter("redis://127.0.0.1:6379/0", f"bench-{secrets.token_hex(4)}")
    for _ in range(200):  # warm-up: the connection, the script cached in Redis
        await limiter.release(key, await limiter.acquire(key))
    import redis.asyncio as aioredis

    bare = aioredis.from_url("redis://127.0.0.1:6379/0")
    wall, cpu, ping_wall, ping_cpu = [], [], [], []
    for _ in range(10):  # alternating with the baseline: two bare round trips (PING, PING)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(500):
            lease = await limiter.acquire(key)
            await limiter.release(key, lease)
            limiter.spend(key, 254)
        wall.append((time.perf_counter() - t0) / 500 * 1e6)
        cpu.append((time.process_time() - c0) / 500 * 1e6)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(500):
            await bare.ping()
            await bare.ping()
        ping_wall.append((time.perf_counter() - t0) / 500 * 1e6)
        ping_cpu.append((time.process_time() - c0) / 500 * 1e6)
    assert limiter.state == "redis"
    await limiter.aclose()
    await bare.aclose()
    print(f"key lookup (HMAC + dict, 200 keys): {lookup_us:.1f} µs CPU")
    print(f"limit check + release + budget count (Redis): median {statistics.median(wall):.0f} µs "
          f"wall, {statistics.median(cpu):.0f} µs CPU per request (min {min(wall):.0f} / "
          f"{min(cpu):.0f})")
    print(f"baseline, two bare redis-py round trips (PING, PING): median "
          f"{statistics.median(ping_wall):.0f} µs wall, {statistics.median(ping_cpu):.0f} µs CPU")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--keys", action="store_true",
                        help="add a service key with limits (Redis) beside the env token")
    parser.add_argument("--in-process", action="store_true",
                        help="measure NluService.decide() alone, no HTTP")
    ns = parser.parse_args()
    if ns.serve:
        serve_fixed(ns.serve, REPLY)
    elif ns.in_process and ns.keys:
        asyncio.run(keys_in_process())
    elif ns.in_process:
        asyncio.run(in_process())
    else:
        import uvloop

        uvloop.install()
        asyncio.run(main(ns))
