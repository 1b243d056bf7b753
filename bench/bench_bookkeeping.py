"""The per-decision bookkeeping around the model call, stage by stage, version against version.

    .venv/bin/python bench/bench_bookkeeping.py [--base /tmp/hotpath-base] [--rounds 6]

Each stage below is called `--n` times in a row in one process (best of three batches, CPU µs
per call); a whole `NluService.decide()` (prompt, pool, shaping, parsing, extraction,
validation, `Decision`, the call-log record and its metrics, with the HTTP round trip replaced
by the fixed answer) closes the list, followed by the background writer's share (the COPY
inputs built for the records those decisions queued, the driver faked so no I/O is timed).

With `--base DIR` (an export of another commit: `git archive <commit> | tar -x -C DIR`), this
script runs itself alternately under that tree's code and this one's, `--rounds` times each,
and prints, per stage, the median of each side's rounds and their ratio (this / base): on a
machine shared with other work only interleaved ratios mean anything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]


def best_us(fn: Callable[[], Any], n: int) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


class _FakeDriver:
    """What the writer's COPY hands asyncpg, consumed and dropped (no I/O timed)."""

    rows = 0

    @contextlib.asynccontextmanager
    async def transaction(self) -> Any:
        yield

    async def copy_records_to_table(self, table: str, *, schema_name: str,
                                    columns: Any, records: Any) -> None:
        for row in records:
            _FakeDriver.rows += len(row)

    async def executemany(self, query: str, args: Any) -> None:  # the usage rollup's upsert
        for row in args:
            _FakeDriver.rows += len(row)


class _FakeDb:
    class engine:
        class dialect:
            driver = "asyncpg"

        @staticmethod
        @contextlib.asynccontextmanager
        async def connect() -> Any:
            class Conn:
                async def get_raw_connection(self) -> Any:
                    class Raw:
                        driver_connection = _FakeDriver()
                    return Raw()
            yield Conn()


async def measure(n: int) -> dict[str, float]:
    import callout_server  # first: bench_nlu puts its own checkout first on sys.path

    sys.path.insert(0, str(HERE.parent))
    import orjson
    from bench_nlu import DECIDE, MODEL, REPLY

    from callout_server.calllog import metrics as calllog_metrics
    from callout_server.calllog.recorder import DiagnosticsRecorder
    from callout_server.calllog.reports import record_call, to_record
    from callout_server.llm import LLMClient, LLMConfig
    from callout_server.tiers.nlu.schemas import DecideRequest, Decision
    from callout_server.tiers.nlu.service import NluService, llm_request
    from callout_server.upstream import Route, Upstreams

    async def fixed(self: object, *args: object) -> tuple[int, bytes, str | None]:
        return 200, REPLY, None

    LLMClient._post = fixed  # type: ignore[method-assign]
    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:9/v1", model=MODEL,
                    max_tokens=300, temperature=0.1, id=7)
    route = Route(cfg)
    client = LLMClient()
    upstreams = Upstreams(client)
    recorder = DiagnosticsRecorder(_FakeDb(), nlu_inputs_days=7)  # type: ignore[arg-type]
    recorder._ids._ids.extend(range(1, 10**8))
    service = NluService(upstreams, lambda: route, recorder)
    req = DecideRequest.model_validate_json(orjson.dumps(DECIDE))
    served = await upstreams.call(route, deadline_s=1.5).complete(llm_request(req))
    report = served.report
    out: dict[str, float] = {}

    def drain() -> None:
        recorder._queue.clear()

    def observe() -> None:
        calllog_metrics.observe(rec)

    rec = to_record(report, "nlu", call_id=req.call_id, node_id=req.node_id).clean()
    out["metrics: calllog observe()"] = best_us(observe, n)
    out["record: to_record() + clean()"] = best_us(
        lambda: to_record(report, "nlu", call_id=req.call_id, node_id=req.node_id).clean(), n)

    count = 0

    def record() -> None:
        nonlocal count
        record_call(recorder, report, "nlu", call_id=req.call_id, node_id=req.node_id)
        count += 1
        if count % 1000 == 0:
            drain()
    out["record: record_call() into the recorder"] = best_us(record, n)
    drain()
    out["upstream: Upstreams.call()"] = best_us(
        lambda: upstreams.call(route, deadline_s=1.5, started=time.perf_counter()), n)
    out["Decision(...)"] = best_us(lambda: Decision(
        intent="agree", confidence=0.93, slots={"time": "明天下午三点以后"}, fallback=False,
        model=MODEL, latency_ms=3, diagnostic=None), n)

    async def decide_batch(k: int) -> float:
        t0 = time.process_time()
        for _ in range(k):
            await service.decide(req, received_at=time.perf_counter())
        return (time.process_time() - t0) / k * 1e6

    async def writer_batch() -> float:
        batch = list(recorder._queue)
        drain()
        t0 = time.process_time()
        for i in range(0, len(batch), 200):
            await recorder._insert(batch[i:i + 200])
        return (time.process_time() - t0) / max(len(batch), 1) * 1e6

    await decide_batch(500)
    drain()
    decide, writer = [], []
    for _ in range(3):
        decide.append(await decide_batch(n))
        writer.append(await writer_batch())
    out["NluService.decide() (fixed answer)"] = min(decide)
    out["writer: COPY inputs per record (records + NLU inputs)"] = min(writer)
    # The work counted, which load does not change: Python and C function calls per decision
    # (cProfile's count) for decide() and the writer's share.
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    await decide_batch(1000)
    await writer_batch()
    profile.disable()
    stats = pstats.Stats(profile)
    out["function calls per decision, decide() + writer (count)"] = (
        stats.total_calls / 1000)  # type: ignore[attr-defined]
    await client.aclose()
    out["(code from)"] = str(Path(callout_server.__file__).parents[1])  # type: ignore[assignment]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--base", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json or args.base is None:
        import uvloop

        out = uvloop.run(measure(args.n))
        if args.json:
            print(json.dumps(out))
        else:
            for name, us in out.items():
                print(f"| {name} | {us} |")
        return
    sides: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    for i in range(args.rounds):
        order = [("base", args.base), ("this", ROOT)]
        if i % 2:
            order.reverse()
        for side, tree in order:
            env = dict(os.environ, PYTHONPATH=str(tree))
            res = subprocess.run([sys.executable, str(HERE), "--json", "--n", str(args.n)],
                                 env=env, capture_output=True, text=True, cwd=tree, check=True)
            sides[side].append(json.loads(res.stdout.strip().splitlines()[-1]))
    print(f"CPU µs per call, median of {args.rounds} interleaved rounds "
          f"(load average {os.getloadavg()[0]:.1f}); base {args.base}, this {ROOT}")
    print("| stage | base | this | this / base |")
    print("|---|---:|---:|---:|")
    print(f"code: {sides['base'][0].pop('(code from)')} / {sides['this'][0].pop('(code from)')}")
    for name in sides["this"][0]:
        if name.startswith("("):
            continue
        b = statistics.median(r[name] for r in sides["base"] if name in r)
        t = statistics.median(r[name] for r in sides["this"])
        print(f"| {name} | {b:.1f} | {t:.1f} | {t / b:.2f} |")


if __name__ == "__main__":
    main()
