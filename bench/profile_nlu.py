"""A sampling profile of one callout-server worker serving `POST /api/nlu/decide` under load.

    .venv/bin/pip install py-spy      # a wheel; not a project dependency
    .venv/bin/python bench/profile_nlu.py [--inflight 16] [--seconds 20] [--top 25] [--key]
    .venv/bin/python bench/profile_nlu.py --summarise FILE     # an earlier raw profile again

The fixed-answer upstream and `callout-server serve` (1 worker, call log on PostgreSQL) as in
bench_peers.py; this process keeps `--inflight` decisions outstanding while py-spy samples the
worker (`--nonblocking`, so the worker is never paused; idle threads are not sampled: the
samples are where its CPU goes). Each sample is charged to one stage: the innermost frame of
its stack that belongs to a stage (STAGES, in order of precedence), so a pydantic frame under
the route's body parsing is "request decoding", one under the call log's record is "call-log
record"; the framework, the server and the event loop get only what no other stage claims, and
a background task (the call log's writer) takes every sample under it. The table gives each stage's share of the samples and, from the worker's CPU per
request measured over the same window, its µs per decision.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from bench_nlu import (
    DECIDE,
    SERVICE_TOKEN,
    create_limited_key,
    create_pg_database,
    drop_pg_database,
)
from bench_peers import start_ours, tree_cpu_s
from loadgen import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = "redis://127.0.0.1:6379/0"

# (stage, pattern on "function (file)"), innermost match wins, earlier rules first at a frame.
# Background tasks: a sample with one of these anywhere in its stack is theirs.
TASKS: list[tuple[str, str]] = [
    ("call-log writer (background task)",
     r"^DiagnosticsRecorder\.(_write_loop|_write_batch|_insert|_insert_bounded|flush|purge_expired)"
     r"|^IdAllocator\.(refill|_reserve)|^purge_every "),
    ("configuration poll / bus (background task)", r"callout_server/config/bus\.py"),
]
_TASKS = [(name, re.compile(p)) for name, p in TASKS]
STAGES: list[tuple[str, str]] = [
    ("database driver (outside the writer)", r"sqlalchemy/|asyncpg/"),
    ("logging", r"/logging/|pythonjsonlogger"),
    ("metrics (prometheus_client)", r"prometheus_client/|calllog/metrics\.py|upstream/metrics\.py"),
    ("call-log record (hot path)", r"calllog/reports\.py|calllog/records\.py|calllog/recorder\.py|calllog/ids\.py|calllog/inputs\.py"),
    ("upstream pool bookkeeping", r"upstream/endpoint\.py|upstream/ewma\.py|upstream/pool\.py"),
    ("JSON extraction", r"llm/json_extract\.py|llm/json_tolerant\.py"),
    ("answer validation", r"tiers/nlu/validate\.py"),
    ("response parsing (adapter, answer, classify)", r"llm/adapters/|llm/answer\.py|llm/classify\.py|llm/events\.py|llm/diagnostics\.py"),
    ("dialect shaping (build_request)", r"llm/request_body\.py|llm/thinking\.py|llm/dialects\.py"),
    ("client HTTP (aiohttp)", r"aiohttp/|yarl/|multidict/|httpx_aiohttp/"),
    ("client complete() itself", r"llm/client\.py|llm/transport\.py|llm/credentials\.py"),
    ("upstream call (route, pick, attempt)", r"callout_server/upstream/"),
    ("prompt (messages, overrides)", r"tiers/nlu/prompt\.py|tiers/overrides\.py|llm/request\.py"),
    ("NLU service itself", r"tiers/nlu/service\.py"),
    ("configuration snapshot read", r"callout_server/config/snapshot\.py"),
    ("request decoding and validation", r"^(request_body_to_args|_validate_value_with_model_field|_extract_form_body|_get_body|Request\.body|Request\.json|get_request_body|BaseModel\.model_validate_json) |callout_server/validation\.py|tiers/nlu/schemas\.py|i18n/validation\.py"),
    ("response encoding", r"^(serialize_response|jsonable_encoder|_prepare_response_content|_encode|\w*Response\.render|\w*Response\.__init__|\w*Response\.init_headers) "),
    ("auth", r"callout_server/auth/"),
    ("edge (language, NUL, size, vary)", r"callout_server/api/edge\.py|callout_server/api/language\.py|callout_server/i18n/"),
    ("FastAPI dependencies", r"fastapi/dependencies/|api/deps\.py"),
    ("routing (Starlette router)", r"starlette/routing\.py"),
    ("framework (FastAPI/Starlette app, middleware)", r"fastapi/|starlette/"),
    ("server (uvicorn + httptools)", r"uvicorn/|httptools"),
    ("event loop (asyncio, uvloop)", r"asyncio/|uvloop/|contextvars"),
]
_COMPILED = [(name, re.compile(p)) for name, p in STAGES]
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^:]*)(:\d+)?\)$")


# Stages that only take a sample no specific stage claims: ModelField.validate (a FastAPI
# frame) under request_body_to_args is request decoding, not the framework.
# The edge, the router, the framework, the server and the loop sit above every route: each
# takes its own frames' samples (innermost of them), never those of a stage below it.
GENERIC = frozenset({"edge (language, NUL, size, vary)", "routing (Starlette router)",
                     "framework (FastAPI/Starlette app, middleware)",
                     "server (uvicorn + httptools)", "event loop (asyncio, uvloop)"})


def _key(frame: str) -> str:
    m = _FRAME.match(frame)
    return f"{m['func']} ({m['file']})" if m else frame


def stage_of(stack: list[str]) -> str:
    keys = [_key(frame) for frame in stack]
    for name, rx in _TASKS:
        if any(rx.search(key) for key in keys):
            return name
    generic = None
    for key in reversed(keys):  # innermost first
        for name, rx in _COMPILED:
            if rx.search(key):
                if name not in GENERIC:
                    return name
                generic = generic or name
                break
    return generic or "other"


def summarise(raw: Path, cpu_ms_per_req: float | None, top: int) -> None:
    stages: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    by_stage: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    total = 0
    for line in raw.read_text().splitlines():
        stack_s, _, count_s = line.rpartition(" ")
        if not stack_s:
            continue
        count = int(count_s)
        stack = stack_s.split(";")
        stage = stage_of(stack)
        stages[stage] += count
        m = _FRAME.match(stack[-1])
        leaf = f"{m['func']} ({m['file'].split('site-packages/')[-1]})" if m else stack[-1]
        leaves[leaf] += count
        by_stage[stage][leaf] += count
        total += count
    print(f"{total} samples" + (f"; worker CPU {cpu_ms_per_req * 1000:.0f} µs per decision "
                                f"over the window" if cpu_ms_per_req else ""))
    print("\n| stage | share of samples | µs per decision | its top innermost frames (% of all) |")
    print("|---|---:|---:|---|")
    for name, n in stages.most_common():
        us = f"{n / total * cpu_ms_per_req * 1000:.0f}" if cpu_ms_per_req else ""
        inner = ", ".join(f"`{f.split(' (')[0]}` {100 * k / total:.1f}"
                          for f, k in by_stage[name].most_common(3))
        print(f"| {name} | {100 * n / total:.1f} % | {us} | {inner} |")
    print(f"\ntop {top} innermost Python frames (self time)\n")
    print("| frame | share |")
    print("|---|---:|")
    for name, n in leaves.most_common(top):
        print(f"| `{name}` | {100 * n / total:.1f} % |")


async def load(url: str, inflight: int, seconds: float, token: str = SERVICE_TOKEN) -> int:
    body = orjson.dumps(DECIDE)
    headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
    done = 0
    stop = time.perf_counter() + seconds
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        async def caller() -> None:
            nonlocal done
            while time.perf_counter() < stop:
                async with http.post(url, data=body, headers=headers) as r:
                    data = await r.read()
                    assert r.status == 200 and b'"fallback":false' in data, data
                done += 1

        await asyncio.gather(*(caller() for _ in range(inflight)))
    return done


async def profile(args: argparse.Namespace, py_spy: str) -> tuple[Path, float]:
    up_port, port = free_port(), free_port()
    database_url = await create_pg_database()
    procs: list[subprocess.Popen[bytes]] = []
    workdir = tempfile.mkdtemp()
    try:
        upstream = subprocess.Popen(  # noqa: ASYNC220 - nothing runs on the loop yet
            [sys.executable, str(ROOT / "bench" / "bench_nlu.py"), "--serve", str(up_port)])
        procs.append(upstream)
        wait_port(up_port, upstream, "upstream")
        # --key: limits counted in Redis, as bench_nlu.py --keys runs them.
        extra = {"CALLOUT_REDIS_URL": REDIS_URL,
                 "CALLOUT_REDIS_CHANNEL_PREFIX": f"bench-{port}",
                 **({"PYTHONPATH": os.environ["BENCH_PYTHONPATH"]}
                    if "BENCH_PYTHONPATH" in os.environ else {})} if args.key else {}
        worker = start_ours(port, f"http://127.0.0.1:{up_port}/v1", database_url, workdir, 1,
                            args.server, extra)
        procs.append(worker)
        wait_port(port, worker, "callout-server", timeout_s=60)
        url = f"http://127.0.0.1:{port}/api/nlu/decide"
        token = await create_limited_key(f"http://127.0.0.1:{port}") if args.key \
            else SERVICE_TOKEN
        await load(url, args.inflight, 3.0, token)  # warm-up
        raw = Path(args.out)
        spy = subprocess.Popen(  # noqa: ASYNC220
            [py_spy, "record", "--pid", str(worker.pid), "--format", "raw", "--nonblocking",
             "--rate", str(args.rate), "--duration", str(int(args.seconds)), "--output", str(raw)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await asyncio.sleep(0.5)  # py-spy attaches
        cpu0 = tree_cpu_s(worker.pid)
        n = await load(url, args.inflight, args.seconds - 1.0, token)
        cpu = tree_cpu_s(worker.pid) - cpu0
        await asyncio.to_thread(spy.wait)
        if args.key:
            async with aiohttp.ClientSession() as http, \
                    http.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
            print("limits: " + "; ".join(line for line in text.splitlines()
                                         if line.startswith("callout_key_limit_")))
        print(f"{n} decisions at {args.inflight} in flight in {args.seconds - 1:.0f} s, load average "
              f"{os.getloadavg()[0]:.1f}; raw profile in {raw}")
        return raw, 1000 * cpu / n
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=20)
        await drop_pg_database(database_url)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--key", action="store_true",
                        help="as a service key with every limit set (counted in Redis)")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--server", default="uvicorn")
    parser.add_argument("--out", default="/tmp/nlu-profile.txt")
    parser.add_argument("--summarise", metavar="FILE", help="summarise an earlier raw profile")
    parser.add_argument("--cpu-ms", type=float, help="with --summarise: CPU ms per decision")
    args = parser.parse_args()
    if args.summarise:
        summarise(Path(args.summarise), args.cpu_ms, args.top)
        return
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(py_spy).exists():
        raise SystemExit("py-spy not found: .venv/bin/pip install py-spy")
    import uvloop

    raw, cpu_ms = uvloop.run(profile(args, py_spy))
    summarise(raw, cpu_ms, args.top)


if __name__ == "__main__":
    main()
