"""Side by side in one run: what callout-server's NLU decision and TensorZero's gateway add.

    .venv/bin/python bench/bench_peers.py [--rounds 4] [--seconds 3] [--concurrency 1,16,64]
                                          [--workers 1] [--no-tensorzero] [--server uvicorn]
                                          [--floor]

Processes, all on loopback:
  upstream    the fixed-answer aiohttp upstream of bench_nlu.py (uvloop), its own process
  ours        `callout-server serve --workers N` (the CLI as operators run it), POST
              /api/nlu/decide: prompt, the call over the pool, JSON extraction, validation, the
              call log written to a fresh PostgreSQL database
  tensorzero  TensorZero 2026.6.0's Rust gateway (it ships inside the PyPI wheel), a pure
              proxy, sent exactly the upstream request our worker builds for the same decision
              (`chat_template_kwargs` put in by its provider's `extra_body`). Installed on the
              first run into its own venv, /tmp/peer-tz-venv (never a project dependency, never
              in the test suite); `--no-tensorzero` leaves it out
  python-floor  with `--floor`: bench/floor_proxy.py, a bare Python proxy (uvloop, httptools,
              our client pool) sent the upstream request unchanged: the two HTTP exchanges a
              Python gateway cannot avoid, nothing else
  this        the load generator: closed loop, one aiohttp session per target, uvloop

For each concurrency, `--rounds` rounds; each round runs a direct segment (straight to the
upstream) right before each hub's segment, hubs in alternating order. "added" is a hub's p50/p99
minus those of the direct segments paired with it. CPU per request is from /proc (user +
system of the process and its children, so `--workers 2` counts both workers and their
supervisor), for the hub, the upstream and this load generator: on a shared 2-core machine it
is steadier than any wall-clock figure, and the ratios of one run are what to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import orjson
from bench_nlu import (
    DECIDE,
    SERVICE_TOKEN,
    create_pg_database,
    drop_pg_database,
    upstream_body,
)
from loadgen import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
TZ_VERSION = "2026.6.0"
TZ_VENV = Path("/tmp/peer-tz-venv")  # the venv ../shared/peers/setup_gateways.sh makes
TZ_MODEL = "tensorzero::model_name::bench"

# Runs under the TensorZero venv's python: the Rust gateway starts inside that process (a tokio
# runtime on its own threads) at a random port; we write its base URL and sleep until SIGTERM,
# so all CPU the process uses is the gateway's. No ClickHouse, no Postgres: nothing stored.
TZ_GATEWAY = r'''
import signal, sys, warnings
from openai import OpenAI
from tensorzero import patch_openai_client
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    client = patch_openai_client(OpenAI(api_key="unused"), config_file=sys.argv[1],
                                 clickhouse_url=None, async_setup=False)
open(sys.argv[2], "w").write(str(client.base_url))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    signal.pause()
'''

TZ_CONFIG = """[models.bench]
routing = ["up"]

[models.bench.providers.up]
type = "openai"
model_name = "{model}"
api_base = "{base}/"
api_key_location = "none"
extra_body = [{{ pointer = "/chat_template_kwargs", value = {{ enable_thinking = false }} }}]
"""


def ensure_tensorzero() -> Path:
    python = TZ_VENV / "bin" / "python"
    check = f"import importlib.metadata as m, sys; sys.exit(m.version('tensorzero') != '{TZ_VERSION}')"
    if subprocess.run([str(python), "-c", check], capture_output=True).returncode != 0 \
            if python.exists() else True:
        print(f"installing tensorzero=={TZ_VERSION} into {TZ_VENV} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(TZ_VENV)], check=True)
        subprocess.run([str(TZ_VENV / "bin" / "pip"), "install", "-q",
                        f"tensorzero=={TZ_VERSION}", "openai==3.57.0"], check=True)
    return python


# -- CPU accounting -----------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its live descendants (Linux /proc)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            for tid in os.listdir(f"/proc/{p}/task"):
                stack += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
        except (OSError, IndexError, ValueError):
            pass
    return total / _TICK


def worker_shares(pid: int) -> list[float]:
    """CPU seconds of a server process and of each of its children (uvicorn's workers)."""
    def own(p: int) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK

    try:
        children = [int(c) for t in os.listdir(f"/proc/{pid}/task")
                    for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]
        return [own(pid)] + [tree_cpu_s(c) for c in children]
    except OSError:
        return []


def machine_busy() -> tuple[int, int]:
    parts = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = parts[3] + parts[4]
    total = sum(parts[:8])
    return total - idle, total


# -- targets and segments -----------------------------------------------------------------------

@dataclass
class Target:
    name: str
    url: str
    body: bytes
    headers: dict[str, str]
    pid: int  # the server process whose CPU is charged to this target
    expect: bytes = b"intent"  # a proxy's answer carries the decision as an escaped string


@dataclass
class Cell:
    """Everything one target did at one concurrency, summed over its segments."""

    lat: list[float] = field(default_factory=list)  # ms
    ok: int = 0
    errors: int = 0
    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # who -> CPU seconds
    busy: float = 0.0  # machine busy fraction x seconds
    first_error: str | None = None

    def rps(self) -> float:
        return self.ok / self.seconds if self.seconds else float("nan")

    def cpu_ms(self, who: str) -> float:
        return 1000 * self.cpu.get(who, 0.0) / self.ok if self.ok else float("nan")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def segment(http: aiohttp.ClientSession, t: Target, inflight: int, seconds: float,
                  cell: Cell, pids: dict[str, int]) -> None:
    """`inflight` callers back to back for `seconds`; CPU counted over the segment + 0.3 s drain
    (the call log's batched writes belong to the requests that caused them)."""
    await asyncio.sleep(0.1)  # settle
    cpu0 = {who: tree_cpu_s(pid) for who, pid in pids.items()}
    me0, busy0 = time.process_time(), machine_busy()
    perf = time.perf_counter
    stop = perf() + seconds

    async def caller() -> None:
        while perf() < stop:
            t0 = perf()
            try:
                async with http.post(t.url, data=t.body, headers=t.headers) as r:
                    data = await r.read()
                    status = r.status
            except Exception as exc:  # every failure counts
                cell.errors += 1
                cell.first_error = cell.first_error or repr(exc)
                continue
            if status == 200 and t.expect in data:
                cell.ok += 1
                cell.lat.append((perf() - t0) * 1000)
            else:
                cell.errors += 1
                cell.first_error = cell.first_error or f"HTTP {status}: {data[:200]!r}"

    start = perf()
    await asyncio.gather(*(caller() for _ in range(inflight)))
    elapsed = perf() - start
    await asyncio.sleep(0.3)
    cell.seconds += elapsed
    for who, pid in pids.items():
        cell.cpu[who] = cell.cpu.get(who, 0.0) + tree_cpu_s(pid) - cpu0[who]
    cell.cpu["loadgen"] = cell.cpu.get("loadgen", 0.0) + time.process_time() - me0
    busy1 = machine_busy()
    cell.busy += (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1) * elapsed


async def measure(args: argparse.Namespace, direct: Target, hubs: list[Target]) -> dict:
    pids = {"upstream": direct.pid, **{h.name: h.pid for h in hubs}}
    results: dict = {}
    for inflight in args.concurrency:
        sessions = {t.name: aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            limit=0, keepalive_timeout=60)) for t in (direct, *hubs)}
        try:
            for t in (direct, *hubs):  # warm-up: connections, caches
                await segment(sessions[t.name], t, inflight, 1.0, Cell(), pids)
            cells = {t.name: Cell() for t in (direct, *hubs)}
            paired = {h.name: Cell() for h in hubs}
            rounds: dict[str, list[float]] = {h.name: [] for h in hubs}
            for r in range(args.rounds):
                for h in hubs if r % 2 == 0 else hubs[::-1]:
                    d = Cell()
                    await segment(sessions[direct.name], direct, inflight, args.seconds, d, pids)
                    g = Cell()
                    await segment(sessions[h.name], h, inflight, args.seconds, g, pids)
                    for into, part in ((cells[direct.name], d), (paired[h.name], d), (cells[h.name], g)):
                        into.lat += part.lat
                        into.ok += part.ok
                        into.errors += part.errors
                        into.seconds += part.seconds
                        into.busy += part.busy
                        into.first_error = into.first_error or part.first_error
                        for k, v in part.cpu.items():
                            into.cpu[k] = into.cpu.get(k, 0.0) + v
                    rounds[h.name].append(g.cpu_ms(h.name))
        finally:
            for s in sessions.values():
                await s.close()
        results[inflight] = (cells, paired, rounds)
        report_cell(inflight, cells, paired, rounds, hubs)
    return results


def report_cell(inflight: int, cells: dict[str, Cell], paired: dict[str, Cell],
                rounds: dict[str, list[float]], hubs: list[Target]) -> None:
    d = cells["direct"]
    print(f"\n## {inflight} in flight (direct: p50 {pct(d.lat, .5):.2f} ms, p99 "
          f"{pct(d.lat, .99):.2f} ms, {d.rps():.0f} req/s)")
    print("| hub | added p50 ms | added p99 ms | req/s | hub CPU ms/req (per round) "
          "| upstream CPU ms/req | loadgen CPU ms/req | machine busy | errors |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for h in hubs:
        c, p = cells[h.name], paired[h.name]
        per_round = " / ".join(f"{x:.3f}" for x in rounds[h.name])
        print(f"| {h.name} | {pct(c.lat, .5) - pct(p.lat, .5):+.2f} | "
              f"{pct(c.lat, .99) - pct(p.lat, .99):+.2f} | {c.rps():.0f} | "
              f"**{statistics.median(rounds[h.name]):.3f}** ({per_round}) | "
              f"{c.cpu_ms('upstream'):.3f} | {c.cpu_ms('loadgen'):.3f} | "
              f"{100 * c.busy / c.seconds:.0f}% | {c.errors} |")
        if c.first_error:
            print(f"  first error of {h.name}: {c.first_error}")
    names = [h.name for h in hubs]
    base = "tensorzero" if "tensorzero" in names else names[0]
    for name in names:
        if name == base:
            continue
        o, z = cells[name], cells[base]
        if not (o.ok and z.ok):
            continue
        po, pz = paired[name], paired[base]
        print(f"{name} / {base}: CPU per request "
              f"{statistics.median(rounds[name]) / statistics.median(rounds[base]):.2f}x, "
              f"req/s {o.rps() / z.rps():.2f}x, added p50 "
              f"{(pct(o.lat, .5) - pct(po.lat, .5)) / max(pct(z.lat, .5) - pct(pz.lat, .5), 0.01):.2f}x")
    sys.stdout.flush()


# -- processes ------------------------------------------------------------------------------------

def start_ours(port: int, upstream: str, database_url: str, workdir: str, workers: int,
               server: str, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`server`: uvicorn (what `serve` runs), granian-direct, uvicorn-direct, minimal
    (bench/floor_proxy.py --app: the app on a bare protocol) or direct (the same, the
    decision without the web layer); with `@PATH`,
    the code of another checkout at PATH (e.g. a worktree of the commit before a change),
    with that checkout's config.toml (an older one refuses settings it does not know) and,
    if it has one, its own `.venv` (the same code under another interpreter)."""
    server, _, code = server.partition("@")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLOUT_")}
    python = sys.executable
    if code:
        env["PYTHONPATH"] = str(Path(code).resolve())
        if (Path(code) / ".venv" / "bin" / "python").exists():
            python = str(Path(code).resolve() / ".venv" / "bin" / "python")
    env.update({
        "CALLOUT_CONFIG": str((Path(code).resolve() if code else ROOT) / "config.toml"),
        "CALLOUT_NLU_BASE_URL": upstream,
        "CALLOUT_SERVICE_TOKEN": SERVICE_TOKEN, "CALLOUT_ADMIN_TOKEN": "bench-admin-token",
        "CALLOUT_ADMIN_USER": "admin", "CALLOUT_ADMIN_PASSWORD": "bench-admin-pass",
        "CALLOUT_SECRET_KEY": "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA=",
        "CALLOUT_DATABASE_URL": database_url, **(extra_env or {}),
    })
    cmd = [python, "-m", "callout_server", "serve", "--host", "127.0.0.1",
           "--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    # Two stand-ins for `serve` as it runs uvicorn, to compare servers (bench_servers.py):
    # granian with the same app factory, and uvicorn started the same way as the control.
    if server == "granian-direct":
        cmd = [str(Path(python).parent / "granian"), "--interface", "asgi", "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
               "--loop", "uvloop", "--no-ws", "--http", "1", "--log-level", "warning",
               "callout_server.app:create_app"]
    elif server == "uvicorn-direct":
        cmd = [python, "-c", "import uvicorn; uvicorn.run('callout_server.app:create_app', "
               f"factory=True, host='127.0.0.1', port={port}, workers={workers}, loop='uvloop', "
               "http='httptools', access_log=False, log_level='warning', proxy_headers=False)"]
    elif server in ("minimal", "direct"):  # the app on the least an ASGI server does
        flag = "--app" if server == "minimal" else "--direct"  # direct: no web layer
        cmd = [python, str(ROOT / "bench" / "floor_proxy.py"), flag, str(port)]
    elif server != "uvicorn":
        cmd += ["--server", server]
    return subprocess.Popen(cmd, env=env, cwd=workdir)


def start_tensorzero(python: Path, upstream: str, workdir: str) -> tuple[subprocess.Popen[bytes], str]:
    config = Path(workdir) / "tensorzero.toml"
    config.write_text(TZ_CONFIG.format(model="qwen3.5-2b", base=upstream))
    url_file = Path(workdir) / "tz.url"
    env = {**os.environ, "TENSORZERO_DISABLE_PSEUDONYMOUS_USAGE_ANALYTICS": "1"}
    proc = subprocess.Popen([str(python), "-c", TZ_GATEWAY, str(config), str(url_file)], env=env,
                            stdout=subprocess.DEVNULL, stderr=open(Path(workdir) / "tz.log", "wb"))
    deadline = time.monotonic() + 60
    while not (url_file.exists() and url_file.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("tensorzero gateway did not start: "
                               + (Path(workdir) / "tz.log").read_text()[-2000:])
        time.sleep(0.1)
    return proc, url_file.read_text().strip()


async def run(args: argparse.Namespace, tz_python: Path | None, commit: str) -> dict:
    up_port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    database_url = await create_pg_database()
    with tempfile.TemporaryDirectory() as workdir:
        try:
            upstream_proc = subprocess.Popen(  # noqa: ASYNC220 - nothing runs on the loop yet
                [sys.executable, str(ROOT / "bench" / "bench_nlu.py"), "--serve", str(up_port)])
            procs.append(upstream_proc)
            wait_port(up_port, upstream_proc, "upstream")
            upstream = f"http://127.0.0.1:{up_port}/v1"
            servers = args.server.split(",")
            ours: list[tuple[str, int, subprocess.Popen[bytes]]] = []
            for spec in servers:
                server, _, n = spec.partition(":")  # "uvicorn:2": that server, 2 workers
                port = free_port()
                proc = start_ours(port, upstream, database_url, workdir,
                                  int(n or args.workers), server)
                procs.append(proc)
                wait_port(port, proc, "callout-server", timeout_s=60)
                ours.append(("ours" if len(servers) == 1 else f"ours-{spec}", port, proc))
            body = upstream_body()
            json_ct = {"content-type": "application/json"}
            direct = Target("direct", f"{upstream}/chat/completions", body,
                            {**json_ct, "authorization": "Bearer sk-bench"}, upstream_proc.pid,
                            expect=b'"choices"')
            hubs = [Target(name, f"http://127.0.0.1:{port}/api/nlu/decide", orjson.dumps(DECIDE),
                           {**json_ct, "authorization": f"Bearer {SERVICE_TOKEN}"}, proc.pid)
                    for name, port, proc in ours]
            if args.floor:  # the Python floor: two HTTP exchanges and nothing else
                port = free_port()
                floor = subprocess.Popen(  # noqa: ASYNC220 - nothing runs on the loop yet
                    [sys.executable, str(ROOT / "bench" / "floor_proxy.py"), str(port), upstream])
                procs.append(floor)
                wait_port(port, floor, "floor proxy")
                hubs.append(Target("python-floor", f"http://127.0.0.1:{port}/", body, json_ct,
                                   floor.pid, expect=b'"choices"'))
            if tz_python is not None:
                tz, tz_url = start_tensorzero(tz_python, upstream, workdir)
                procs.append(tz)
                tz_body = {k: v for k, v in orjson.loads(body).items()
                           if k != "chat_template_kwargs"} | {"model": TZ_MODEL}
                hubs.append(Target("tensorzero", f"{tz_url.rstrip('/')}/chat/completions",
                                   orjson.dumps(tz_body), json_ct, tz.pid))
            print(f"# bench_peers: workers={args.workers} server={args.server} rounds={args.rounds} "
                  f"x {args.seconds} s per segment, {os.cpu_count()} CPUs, load average "
                  f"{os.getloadavg()[0]:.1f} at start, callout-server at {commit}, "
                  f"Python {platform.python_version()} ({sys.executable})")
            results = await measure(args, direct, hubs)
            print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
            for name, _, proc in ours:  # several workers: how evenly the kernel spread the load
                shares = worker_shares(proc.pid)
                if len(shares) > 1:
                    print(f"{name}: CPU by process over the run (supervisor first): "
                          + ", ".join(f"{x:.1f} s" for x in shares))
            return results
        finally:
            for proc in reversed(procs):
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            await drop_pg_database(database_url)


def main(args: argparse.Namespace) -> None:
    import uvloop

    tz_python = ensure_tensorzero() if args.tensorzero else None
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    results = uvloop.run(run(args, tz_python, commit))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            str(c): {name: {"ok": x.ok, "errors": x.errors, "rps": x.rps(),
                            "p50": pct(x.lat, .5), "p99": pct(x.lat, .99),
                            "cpu_ms": {k: x.cpu_ms(k) for k in x.cpu}}
                     for name, x in cells.items()}
            for c, (cells, _, _) in results.items()}, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measured segment")
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 16, 64])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", default="uvicorn",
                        help="callout-server serve --server; a comma-separated list runs one "
                             "worker (set) of each, side by side as hubs ours-<server>; "
                             "SERVER:N gives that one N workers (uvicorn:1,uvicorn:2); "
                             "SERVER@PATH runs the code of the checkout at PATH "
                             "(uvicorn@/tmp/base,uvicorn: before and after, in one run)")
    parser.add_argument("--no-tensorzero", dest="tensorzero", action="store_false")
    parser.add_argument("--floor", action="store_true",
                        help="add bench/floor_proxy.py as a hub: a bare Python proxy on our "
                             "client pool, the least any Python gateway costs per request")
    parser.add_argument("--json-out")
    main(parser.parse_args())
