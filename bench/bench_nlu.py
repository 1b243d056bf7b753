"""Benchmark `POST /api/nlu/decide`: what one callout-server worker adds to a model call.

    .venv/bin/python bench/bench_nlu.py [--requests 2000] [--rounds 5] [--db postgres|sqlite]
                                        [--global-intents on|off]

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
during (b). `--global-intents off` starts the worker with `[global_intents] enabled = false`
(`CALLOUT_GLOBAL_INTENTS_ENABLED`): no phrase rule runs and the prompt is the node's own;
`on` (the default, as shipped) checks the three default intents' rules on every decision
(none hits this utterance) and offers them the model.

    .venv/bin/python bench/bench_nlu.py --privacy

adds (c): the same decisions to a second worker with `[privacy] redact = false`, alternated
with (b) in the same rounds: what redacting the call log costs a worker (its CPU per
decision; the redaction runs in the call-log writer, never on the request).

    .venv/bin/python bench/bench_nlu.py --keys [--requests 2000] [--rounds 5]

adds (c): the same decisions with a service key whose limits are all set (rpm, max_in_flight,
daily_tokens; high enough never to refuse), beside (b) with the environment's token, in the
same run and rounds: what the key lookup, the limit check (from the worker's reserve of
admissions and slots, topped up from Redis in the background), the release and the budget
count add ("added by the key": c - b). The worker then runs with Redis.

    .venv/bin/python bench/bench_nlu.py --in-process --keys

measures what a limited key adds on its own, for a machine too busy for the figures above:
the key lookup (one HMAC and a dict probe) in CPU µs, and the limit check against the real
Redis (admitted from the worker's reserve, the release, the batched budget count) beside the
check as it was before the reserve (one Lua script before each request, a ZREM after it) and
two bare PINGs: wall and CPU µs per request, median of 10 batches of 500 sequential requests
each, the three taking turns.

    .venv/bin/python bench/bench_nlu.py --in-process

measures the tier's own work alone, for a machine too busy for the figures above: one
`NluService.decide()` (validation of the node, prompt, request shaping, parsing,
classification, extraction, the call-log record) with the HTTP round trip replaced by the
fixed answer, in CPU µs per decision, min and median of 12 batches of 3,000.

    .venv/bin/python bench/bench_nlu.py --canary [--requests 1000 --rounds 3]

adds (c): the same decisions (distinct call ids) through the server with a canary running
(half the calls to a candidate configuration on the same upstream), started before and
stopped after each of its batches; (b) sends the same distinct call ids with none running.

    .venv/bin/python bench/bench_nlu.py --in-process --canary

the tier alone, batches with no canary and with one running (half the calls to a candidate, split
by call_id) alternating in one run: what the split costs on the hot path.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from loadgen import free_port, pct, run_batch, serve_fixed, wait_port

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PG_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432"
SERVICE_TOKEN = "bench-service-token"
ADMIN_TOKEN = "bench-admin-token"
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
        "CALLOUT_ADMIN_TOKEN": ADMIN_TOKEN,
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


def upstream_body(global_intents: bool = True) -> bytes:
    """Exactly what the worker sends upstream for DECIDE (same builder, same config)."""
    from callout_server.llm.config import LLMConfig
    from callout_server.llm.request_body import build_request
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import llm_request

    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:1/v1", model=MODEL,
                    max_tokens=300, temperature=0.1)
    node = DecideRequest.model_validate(DECIDE)
    from callout_server.phrases import default_intents

    offered = tuple(i for i in default_intents() if i.enabled) if global_intents else ()
    req = llm_request(node, offered)  # as NluService does
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


async def load(args: argparse.Namespace, upstream: str, worker: str, worker_pid: int,
               off: tuple[str, int] | None = None) -> None:
    bare_body = upstream_body(args.global_intents == "on")
    decide_body = orjson.dumps(DECIDE)
    json_ct = {"content-type": "application/json"}
    bare_headers = {**json_ct, "authorization": "Bearer sk-bench"}
    decide_headers = {**json_ct, "authorization": f"Bearer {SERVICE_TOKEN}"}
    admin_headers = {**json_ct, "authorization": f"Bearer {ADMIN_TOKEN}"}
    # Distinct call ids, as live traffic has (the canary's split hashes each one).
    bodies = itertools.cycle([orjson.dumps({**DECIDE, "call_id": f"c-bench-{i}"})
                              for i in range(1000)])
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60)
    async with aiohttp.ClientSession(connector=connector) as http:
        canary_id: list[int] = []
        late = [0]  # decisions past their deadline_ms (with --canary)

        async def admin(path: str, body: dict[str, object] | None = None) -> dict[str, object]:
            async with http.post(f"{worker}{path}", data=orjson.dumps(body or {}),
                                 headers=admin_headers) as r:
                data = await r.read()
            assert r.status in (200, 201), data
            return dict(orjson.loads(data))

        candidate: dict[str, object] = {}
        if args.canary:  # the candidate: the same upstream under another configuration
            candidate = await admin("/api/admin/llm-configs", {
                "tier": "nlu", "name": "bench-candidate", "base_url": upstream, "model": MODEL,
                "max_tokens": 300, "temperature": 0.1})

        async def canary_on() -> None:
            started = await admin("/api/admin/canaries", {
                "candidate_id": candidate["id"], "percent": 50,
                "rollback": {"min_calls": 1_000_000}})
            canary_id.append(int(started["id"]))  # type: ignore[call-overload]

        async def canary_off() -> None:
            await admin(f"/api/admin/canaries/{canary_id.pop()}/stop")

        async def bare() -> None:
            async with http.post(f"{upstream}/chat/completions", data=bare_body,
                                 headers=bare_headers) as r:
                data = await r.read()
            assert r.status == 200 and orjson.loads(data)["choices"]

        def through_at(url: str) -> Any:
            async def through() -> None:
                body = next(bodies) if args.canary else decide_body
                async with http.post(f"{url}/api/nlu/decide", data=body,
                                     headers=decide_headers) as r:
                    data = await r.read()
                assert r.status == 200, data
                got = orjson.loads(data)
                if args.canary and got["fallback"]:  # counted, not fatal: a loaded machine is late
                    late[0] += 1
                    return
                assert got["intent"] == "agree" and not got["fallback"], got
            return through

        variants = {"a bare upstream": bare, "b /api/nlu/decide": through_at(worker)}
        pids = {"b /api/nlu/decide": worker_pid}
        if off is not None:  # --privacy: the same decisions to a worker with redact = false
            variants["c decide, redact off"] = through_at(off[0])
            pids["c decide, redact off"] = off[1]
        if args.canary:  # the same route, a canary running (50 %): started and stopped per batch
            variants["d decide, canary on"] = through_at(worker)
            pids["d decide, canary on"] = worker_pid
        if args.keys:  # --keys: the same decisions with a service key whose limits are set
            key_headers = {**json_ct, "authorization": f"Bearer {await create_limited_key(worker)}"}

            async def keyed() -> None:
                async with http.post(f"{worker}/api/nlu/decide", data=decide_body,
                                     headers=key_headers) as r:
                    data = await r.read()
                assert r.status == 200, data

            variants["e key with limits"] = keyed
            pids["e key with limits"] = worker_pid
        for call in variants.values():  # warm-up: connections, caches, the worker's imports
            await run_batch(call, 500, 16)

        print(f"loop=uvloop db={args.db} global_intents={args.global_intents} "
              f"requests/variant/round={args.requests} "
              f"rounds={args.rounds} cpus={os.cpu_count()}")
        print(f"{'in flight':>9} | {'variant':<20} | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7}")
        print("-" * 62)
        for inflight in (1, 16, 64):
            n = max(300, args.requests // 4) if inflight == 1 else args.requests
            rps: dict[str, list[float]] = {name: [] for name in variants}
            lats: dict[str, list[float]] = {name: [] for name in variants}
            cpu = dict.fromkeys(pids, 0.0)
            misses = dict.fromkeys(variants, 0)
            for round_no in range(args.rounds):
                # The order turns round by round: a batch leaves work behind it (the call
                # log's writer flushing its records), which the next batch would pay for.
                order = list(variants.items())
                for name, call in (order if round_no % 2 == 0 else order[:1] + order[:0:-1]):
                    late[0] = 0
                    if name.startswith("d"):
                        await canary_on()
                    before = cpu_s(pids[name]) if name in pids else 0.0
                    elapsed, latencies = await run_batch(call, n, inflight)
                    if name in pids:
                        cpu[name] += cpu_s(pids[name]) - before
                    if name.startswith("d"):
                        await canary_off()
                    rps[name].append(n / elapsed)
                    lats[name].extend(latencies)
                    misses[name] += late[0]
            p50 = {name: statistics.median(lats[name]) for name in variants}
            p99 = {name: pct(lats[name], 0.99) for name in variants}
            for name in variants:
                print(f"{inflight:>9} | {name:<20} | {statistics.median(rps[name]):>7.0f} | "
                      f"{p50[name]:>7.2f} | {p99[name]:>7.2f}")
            a = "a bare upstream"
            for b in pids:
                print(f"{'':>9} | {b[:1]} added by the worker: p50 {p50[b] - p50[a]:+.2f} ms, "
                      f"p99 {p99[b] - p99[a]:+.2f} ms; worker CPU "
                      f"{cpu[b] * 1000 / (n * args.rounds):.2f} ms/decision")
            if args.canary:
                b, c = "b /api/nlu/decide", "d decide, canary on"
                print(f"{'':>9} | canary running: p50 {p50[c] - p50[b]:+.2f} ms, "
                      f"p99 {p99[c] - p99[b]:+.2f} ms vs none; worker CPU "
                      f"{cpu[c] / cpu[b]:.3f} x; past the deadline: "
                      f"{misses[b]} without, {misses[c]} with")
            if args.keys:
                b, e = "b /api/nlu/decide", "e key with limits"
                print(f"{'':>9} | added by the key: p50 {p50[e] - p50[b]:+.3f} ms, "
                      f"p99 {p99[e] - p99[b]:+.3f} ms")
            print("-" * 62)
        print(GOALS + ("; a limited key adds < 0.3 ms p50" if args.keys else ""))


async def main(args: argparse.Namespace) -> None:
    up_port, worker_port = free_port(), free_port()
    # Spawning is quick; nothing else runs on this loop yet.
    upstream_proc = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, __file__, "--serve", str(up_port)])
    database_url = await create_pg_database() if args.db == "postgres" else ""
    worker_proc = off_proc = None
    with tempfile.TemporaryDirectory() as workdir:  # the SQLite file lands here
        try:
            wait_port(up_port, upstream_proc, "upstream")
            upstream = f"http://127.0.0.1:{up_port}/v1"
            intents = str(args.global_intents == "on").lower()
            # --keys: limits are counted in Redis. Variants take turns: a connection of one
            # idles through the others, longer than the default keep-alive.
            redis = {"CALLOUT_REDIS_URL": "redis://127.0.0.1:6379/0",
                     "CALLOUT_REDIS_CHANNEL_PREFIX": f"bench-{secrets.token_hex(4)}",
                     "CALLOUT_KEEPALIVE_TIMEOUT_S": "120"}
            worker_proc = start_worker(worker_port, upstream, database_url, workdir,
                                       CALLOUT_GLOBAL_INTENTS_ENABLED=intents,
                                       **(redis if args.keys else {}))
            wait_port(worker_port, worker_proc, "worker", timeout_s=120)  # a loaded machine
            off = None
            if args.privacy:
                off_port = free_port()
                off_proc = start_worker(off_port, upstream, database_url, workdir,
                                        CALLOUT_GLOBAL_INTENTS_ENABLED=intents,
                                        CALLOUT_PRIVACY_REDACT="false")
                wait_port(off_port, off_proc, "worker (redact off)", timeout_s=120)
                off = (f"http://127.0.0.1:{off_port}", off_proc.pid)
            await load(args, upstream, f"http://127.0.0.1:{worker_port}", worker_proc.pid, off)
        finally:
            for proc in (worker_proc, off_proc, upstream_proc):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=15)
            if database_url:
                await drop_pg_database(database_url)


# -- the tier alone ---------------------------------------------------------------------------

async def in_process(canary: bool = False) -> None:
    """The tier's own work per decision; with `canary`, batches with no canary and batches
    with one running (half the calls, by call_id, to a candidate) alternate in the same run."""
    import time

    from callout_server.canary.split import CanarySplit, RunningCanary
    from callout_server.llm import LLMClient, LLMConfig
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import NluService
    from callout_server.upstream import Route

    class FixedAnswer(LLMClient):
        async def _post(self, lane: object, url: str, body: bytes,  # type: ignore[override]
                        headers: dict[str, str], total: float) -> tuple[int, bytes, str | None]:
            return 200, REPLY, None

    class Recorder:  # queues nothing: the record is built, as on the hot path
        keeps_nlu_inputs = True  # the default: each decision hands over its inputs

        def record(self, rec: object) -> int:
            return 1

    from callout_server.intents.compiled import compile_intents
    from callout_server.phrases import default_intents

    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:1/v1", model=MODEL,
                    max_tokens=300, temperature=0.1)
    candidate = LLMConfig(tier="nlu", name="candidate", base_url="http://127.0.0.1:2/v1",
                          model=MODEL, max_tokens=300, temperature=0.1, id=2)
    running = {"nlu": RunningCanary(id=1, tier="nlu", candidate_id=2, percent=50,
                                    salt=secrets.token_hex(16), candidate=Route(candidate))}
    client = FixedAnswer()
    intents = compile_intents(default_intents(), version=0)
    service = NluService(client, lambda: cfg, Recorder(),  # type: ignore[arg-type]
                         global_intents=lambda: intents)
    variants = {
        "model, global intents on": (orjson.dumps(DECIDE), "agree"),
        "model, node opted out": (orjson.dumps({**DECIDE, "global_intents": False}), "agree"),
        "rule hit (opt_out)": (orjson.dumps({**DECIDE, "utterance": "你们别再给我打电话了"}), None),
    }
    for name, (raw, expect) in variants.items():
        async def decide(raw: bytes = raw, expect: str | None = expect) -> None:
            decision = await service.decide(DecideRequest.model_validate_json(raw))
            assert decision.intent == expect and not decision.fallback

        for _ in range(2000):
            await decide()
        per_call: list[float] = []
        for _ in range(12):
            start = time.process_time()
            for _ in range(3000):
                await decide()
            per_call.append((time.process_time() - start) / 3000 * 1e6)
        print(f"NluService.decide() without I/O, {name}: min {min(per_call):.1f} µs, "
              f"median {statistics.median(per_call):.1f} µs CPU per decision")
    if canary:  # no canary vs a canary running, alternated in one run
        services = {
            "none": NluService(client, lambda: cfg, Recorder(),  # type: ignore[arg-type]
                               split=CanarySplit(lambda: {}).chooser("nlu")),
            "canary": NluService(client, lambda: cfg, Recorder(),  # type: ignore[arg-type]
                                 split=CanarySplit(lambda: running).chooser("nlu")),
        }
        # Distinct call ids, as live traffic has: the split hashes each one.
        bodies = [orjson.dumps({**DECIDE, "call_id": f"c-bench-{i}"}) for i in range(3000)]

        async def batch(service: NluService) -> float:
            start = time.process_time()
            for raw in bodies:
                decision = await service.decide(DecideRequest.model_validate_json(raw))
                assert decision.intent == "agree" and not decision.fallback
            return (time.process_time() - start) / len(bodies) * 1e6

        sides = ("none", "canary")
        for name in sides:
            await batch(services[name])  # warm-up
        per_side: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(12):
            order = sides if i % 2 == 0 else tuple(reversed(sides))  # no order effect
            for name in order:
                per_side[name].append(await batch(services[name]))
        for name in sides:
            label = {"none": "no canary", "canary": "a canary running (50%)"}[name]
            print(f"NluService.decide() without I/O, {label}: min {min(per_side[name]):.1f} µs, "
                  f"median {statistics.median(per_side[name]):.1f} µs CPU per decision")
        ratio = statistics.median(per_side["canary"]) / statistics.median(per_side["none"])
        print(f"canary / none (medians): {ratio:.3f}")
    await client.aclose()


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
    import redis.asyncio as aioredis

    bare = aioredis.from_url("redis://127.0.0.1:6379/0")
    former = bare.register_script(FORMER_ACQUIRE)
    base = f"bench-{secrets.token_hex(4)}:sk:{key.id}"
    names = [f"{base}:rpm", f"{base}:inflight", f"{base}:tokens:0"]

    async def before(i: int) -> None:  # the check as it was: a script before, a ZREM after
        await former(keys=names, args=[key.rpm, key.max_in_flight, key.daily_tokens,
                                       f"m{i}", 300_000, 86_400_000])
        await bare.zrem(names[1], f"m{i}")

    async def after(i: int) -> None:  # the reserve: memory, a reservation now and then
        lease = await limiter.acquire(key)
        await limiter.release(key, lease)
        limiter.spend(key, 254)

    async def pings(i: int) -> None:
        await bare.ping()
        await bare.ping()

    runs: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in ("before", "after", "pings")}
    for i in range(200):  # warm-up: the connections, the scripts cached in Redis
        await before(i)
        await after(i)
    rounds = limiter.rounds
    for n in range(10):  # the three alternate, batch by batch
        for name, step in (("before", before), ("after", after), ("pings", pings)):
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(500):
                await step(n * 500 + i)
            runs[name][0].append((time.perf_counter() - t0) / 500 * 1e6)
            runs[name][1].append((time.process_time() - c0) / 500 * 1e6)
    assert limiter.state == "redis"
    rounds = limiter.rounds - rounds
    await limiter.aclose()
    await bare.aclose()
    print(f"key lookup (HMAC + dict, 200 keys): {lookup_us:.1f} µs CPU")
    for name, label in (("before", "before: one Lua check + ZREM per request (Redis)"),
                        ("after", "after: the reserve, limit check + release + budget count"),
                        ("pings", "baseline, two bare redis-py round trips (PING, PING)")):
        wall, cpu = runs[name]
        print(f"{label}: median {statistics.median(wall):.1f} µs wall, "
              f"{statistics.median(cpu):.1f} µs CPU per request (min {min(wall):.1f} / "
              f"{min(cpu):.1f})")
    print(f"reservations during the 5,000 requests after: {rounds}")


FORMER_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm, mif, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local member, lease = ARGV[4], tonumber(ARGV[5])
if budget > 0 then
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used >= budget then return {3, budget, tonumber(ARGV[6])} end
end
if mif > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= mif then return {2, mif, 1000} end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  if redis.call('ZCARD', KEYS[1]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {1, rpm, tonumber(oldest[2]) + 60000 - now}
  end
  redis.call('ZADD', KEYS[1], now, member)
  redis.call('PEXPIRE', KEYS[1], 61000)
end
if mif > 0 then
  redis.call('ZADD', KEYS[2], now + lease, member)
  redis.call('PEXPIRE', KEYS[2], lease + 1000)
end
return {0, 0, 0}
"""


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--global-intents", choices=("on", "off"), default="on",
                        help="the worker's [global_intents] enabled (on: as shipped)")
    parser.add_argument("--privacy", action="store_true",
                        help="also a second worker with [privacy] redact = false, same run")
    parser.add_argument("--keys", action="store_true",
                        help="add a service key with limits (Redis) beside the env token")
    parser.add_argument("--in-process", action="store_true",
                        help="measure NluService.decide() alone, no HTTP")
    parser.add_argument("--canary", action="store_true",
                        help="no canary vs a canary running (50 %%), in the same run")
    ns = parser.parse_args()
    if ns.serve:
        serve_fixed(ns.serve, REPLY)
    elif ns.in_process and ns.keys:
        asyncio.run(keys_in_process())
    elif ns.in_process:
        asyncio.run(in_process(ns.canary))
    else:
        import uvloop

        uvloop.install()
        asyncio.run(main(ns))
