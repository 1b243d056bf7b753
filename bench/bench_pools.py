"""Benchmark upstream pools: dead, slow and holding replicas, failover, hedging, recovery.

    .venv/bin/python bench/bench_pools.py [--seconds 12] [--in-flight 16] [--only N]
        [--redis redis://127.0.0.1:6379/0]           # scenario 5's
        [--litellm /tmp/litellm-venv/bin/python]     # scenario 1 through LiteLLM's Router too

Two processes: the vendor emulator (`callout-server emulator`, one process playing every
replica under `/r/<name>/...`, each answering 20 ms after the request unless told
otherwise) and this one, which drives the real NLU tier (`NluService.decide()`: prompt,
the pool, the shared client's HTTP to the emulator, extraction, validation, the call-log
record built) with N decisions in flight, deadline 1.5 s, fallback intent set. A call is
"answered" when it is the model's decision, not the fallback intent; figures are over the
calls started after the first second (the issue's measure), p50/p99 over all of them.

Scenarios (the issue's), each beside a baseline run in the same process:
  1  three replicas: healthy (20 ms), refusing connections, answering in 2 s;
     baseline: one URL per call in turn (round-robin in front, no health, no hedging) —
     what the tier did before pools; pool: P2C + health, no hedging; pool + hedge 150 ms
  2  the refusing replica comes back (an emulator starts on its port): seconds until it
     serves again, and its state then
  3  every replica of the active configuration down: share answered by the fallback
     configuration, attempts per call
  4  two replicas that hold 10 % of requests for 1 s: p99 with hedge_after_ms 150 vs none
  5  two workers, a dead replica: requests worker B sends there after worker A cooled it
     down, each worker its own view vs health shared through Redis (bench_pools_workers.py)
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import itertools
import json
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from callout_server.llm import Endpoint, LLMClient, LLMConfig  # noqa: E402
from callout_server.tiers.nlu.schemas import DecideRequest  # noqa: E402
from callout_server.tiers.nlu.service import NluService  # noqa: E402
from callout_server.upstream import Route, Upstreams  # noqa: E402

DECIDE = {
    "call_id": "c-bench", "node_id": "confirm_time", "utterance": "明天下午三点以后都可以",
    "intents": [{"name": "agree", "description": "客户同意并给出时间"},
                {"name": "refuse", "description": "客户拒绝"}],
    "slots": [{"name": "time", "description": "客户方便的时间", "type": "string"}],
    "fallback_intent": "refuse", "deadline_ms": 1500,
}
LITELLM = "LiteLLM router, same scenario (measured for the issue): 100 % answered, p99 287 ms"


class Records:
    """The call log's place: keeps what a record would say (no database in this bench)."""

    keeps_nlu_inputs = False  # a `calllog.reports.Recorder`: no inputs are kept here

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.by_call: dict[str, Any] = {}

    def record(self, rec: Any) -> int:
        self.items.append(rec)
        self.by_call[rec.call_id] = rec
        return len(self.items)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_emulator(port: int = 0) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "callout_server.emulator", "--port", str(port), "--no-record"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = line.rsplit(" ", 1)[-1].strip()
    for _ in range(200):
        try:
            if httpx.get(f"{url}/_emulator/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("emulator did not start")


def script(url: str, model: str, replica: str | None, reply: dict[str, Any],
           every: int | None = None) -> None:
    httpx.post(f"{url}/_emulator/scripts", json={
        "match": {"model": model, "replica": replica}, "every": every, "reply": reply,
    }).raise_for_status()


def cfg(model: str, urls: list[str], cid: int, **kw: Any) -> LLMConfig:
    return LLMConfig(tier="nlu", name=f"bench-{cid}", base_url=urls[0], model=model, id=cid,
                     endpoints=tuple(Endpoint(u) for u in urls[1:]), max_tokens=100,
                     temperature=0.1, **kw)


@dataclasses.dataclass
class Result:
    name: str
    started: list[float]
    latency_ms: list[float]
    answered: list[bool]
    attempts: list[int]
    configs: list[int | None]
    codes: list[str] = dataclasses.field(default_factory=list)

    def after(self, t0: float) -> Result:
        keep = [i for i, s in enumerate(self.started) if s >= t0]
        return Result(self.name, [self.started[i] for i in keep],
                      [self.latency_ms[i] for i in keep], [self.answered[i] for i in keep],
                      [self.attempts[i] for i in keep], [self.configs[i] for i in keep],
                      [self.codes[i] for i in keep])

    def line(self) -> str:
        n = len(self.latency_ms)
        lat = sorted(self.latency_ms)
        p50 = statistics.median(lat) if lat else float("nan")
        p99 = lat[min(n - 1, int(n * 0.99))] if lat else float("nan")
        share = 100 * sum(self.answered) / n if n else float("nan")
        extra = sum(a > 1 for a in self.attempts)
        failed = collections.Counter(c for c in self.codes if c != "ok")
        why = ", ".join(f"{code} {count}" for code, count in failed.most_common(3))
        return (f"{self.name:<44} {n:>6} {share:>9.2f} % {p50:>8.1f} {p99:>8.1f} "
                f"{extra:>9}  {why}")


HEADER = (f"{'variant':<44} {'calls':>6} {'answered':>11} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'retried':>9}  fallback intent because")


Decide = Callable[[DecideRequest], Any]


async def drive(name: str, decide: Decide, seconds: float, in_flight: int,
                records: Records) -> Result:
    res = Result(name, [], [], [], [], [])
    t0 = time.perf_counter()
    stop = t0 + seconds
    ids = itertools.count()

    async def worker() -> None:
        while time.perf_counter() < stop:
            req = request(f"c-{next(ids)}")
            start = time.perf_counter()
            decision = await decide(req)
            res.started.append(start - t0)
            res.latency_ms.append((time.perf_counter() - start) * 1000)
            res.answered.append(not decision.fallback)
            rec = records.by_call.get(req.call_id)
            res.attempts.append(getattr(rec, "attempts", None) or 1)
            res.configs.append(getattr(rec, "config_id", None))
            res.codes.append(getattr(rec, "code", "?"))

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return res


def request(call_id: str = "c-bench") -> DecideRequest:
    return DecideRequest.model_validate(DECIDE | {"call_id": call_id})


def service_for(client: LLMClient, route: Route, records: Records) -> NluService:
    return NluService(Upstreams(client), lambda: route, records)


def decider(service: NluService) -> Decide:
    return service.decide


def litellm_line(python: str, url: str, seconds: float, in_flight: int) -> str:
    """Scenario 1 through LiteLLM's Router in its own interpreter (bench/litellm_router.py)."""
    model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
    script(url, model, "slow", {"ttft_ms": 2000})
    script(url, model, None, {"ttft_ms": 20})
    dead = f"http://127.0.0.1:{free_port()}/v1"
    out = subprocess.run([python, str(ROOT / "bench" / "litellm_router.py"), url, model, dead,
                          str(seconds), str(in_flight)], capture_output=True, text=True,
                         timeout=seconds + 120)
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if not lines:
        return f"LiteLLM Router: no figures ({out.stderr.strip().splitlines()[-1:]})"
    fig = json.loads(lines[-1])
    return (f"{'LiteLLM Router (shuffle, 3 retries, cooldown)':<44} {fig['calls']:>6} "
            f"{fig['answered']:>9.2f} % {fig['p50']:>8.1f} {fig['p99']:>8.1f}")


async def scenario_1(url: str, client: LLMClient, seconds: float, in_flight: int,
                     litellm: str | None = None) -> None:
    print("\n1. three replicas: healthy 20 ms, refusing connections, 2 s; deadline 1.5 s, "
          f"{in_flight} in flight, figures after the first second")
    print(HEADER)
    for variant in ("baseline", "pool", "pool+hedge"):
        model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
        script(url, model, "slow", {"ttft_ms": 2000})
        script(url, model, None, {"ttft_ms": 20})
        urls = [f"{url}/r/ok/vllm/v1", f"http://127.0.0.1:{free_port()}/v1",
                f"{url}/r/slow/vllm/v1"]
        records = Records()
        if variant == "baseline":
            # A round-robin balancer in front of one configured URL: each call lands on the
            # next replica; the tier's own retry is all it has.
            singles = [service_for(client, Route(cfg(model, [u], 1)), records) for u in urls]
            turn = itertools.cycle(singles)

            def decide(req: DecideRequest, turn: Any = turn) -> Any:
                return next(turn).decide(req)
        else:
            hedge = 150 if variant == "pool+hedge" else None
            route = Route(cfg(model, urls, 1, hedge_after_ms=hedge))
            decide = decider(NluService(Upstreams(client), lambda route=route: route, records))

        res = await drive(variant, decide, seconds, in_flight, records)
        print(res.after(1.0).line())
    if litellm:
        line = await asyncio.to_thread(litellm_line, litellm, url, seconds, in_flight)
        print(line)
    print(LITELLM)


async def scenario_2(url: str, client: LLMClient) -> None:
    print("\n2. the refusing replica comes back")
    model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
    script(url, model, None, {"ttft_ms": 20})
    port = free_port()
    back = f"http://127.0.0.1:{port}/v1"
    ups = Upstreams(client)
    route = Route(cfg(model, [f"{url}/r/ok/vllm/v1", back], 1))
    records = Records()
    service = NluService(ups, lambda: route, records)
    stop = asyncio.Event()
    served_by: list[tuple[float, str]] = []

    async def traffic() -> None:
        while not stop.is_set():
            req = request(uuid.uuid4().hex)
            decision = await service.decide(req)
            served_by.append((time.perf_counter(), records.by_call[req.call_id].endpoint))
            assert not decision.fallback

    tasks = [asyncio.ensure_future(traffic()) for _ in range(4)]
    await asyncio.sleep(3.0)  # down: cooled, probed, cooled again (backoff)
    state_before = next(v["state"] for v in ups.views() if v["base_url"] == back)
    proc, _ = start_emulator(port)
    started = time.perf_counter()
    try:
        while not any(t > started and e == back for t, e in served_by):
            if time.perf_counter() - started > 30:
                break
            await asyncio.sleep(0.05)
        took = next((t - started for t, e in served_by if t > started and e == back), None)
        await asyncio.sleep(0.5)
        state_after = next(v["state"] for v in ups.views() if v["base_url"] == back)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        proc.kill()
        proc.wait()
    shown = f"{took:.1f} s" if took is not None else "not within 30 s"
    print(f"while down: {state_before}; back up -> serving again after {shown}, "
          f"state {state_after}")


async def scenario_3(url: str, client: LLMClient, seconds: float, in_flight: int) -> None:
    print("\n3. every replica of the active configuration down (503, refused); fallback "
          "configuration healthy")
    model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
    backup = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
    script(url, model, None, {"status": 503})
    script(url, backup, None, {"ttft_ms": 20})
    primary = cfg(model, [f"{url}/r/a/vllm/v1", f"http://127.0.0.1:{free_port()}/v1"], 1,
                  fallback_ids=(2,))
    fallback = cfg(backup, [f"{url}/r/f/vllm/v1"], 2)
    route = Route(primary, (fallback,))
    records = Records()
    decide = decider(NluService(Upstreams(client), lambda: route, records))
    res = await drive("pool with fallback", decide, seconds, in_flight, records)
    by_fallback = sum(c == 2 for c in res.configs) / len(res.configs) * 100
    print(HEADER)
    print(res.line())
    print(f"answered by the fallback configuration: {by_fallback:.2f} %; records with "
          f"attempts >= 2: {sum(a >= 2 for a in res.attempts)} "
          "(the pool cools its replicas down after the first failures)")


async def scenario_4(url: str, client: LLMClient, seconds: float, in_flight: int) -> None:
    print("\n4. two replicas, each holding 10 % of requests for 1 s (else 20 ms)")
    print(HEADER)
    for hedge in (None, 150):
        model = f"qwen2.5-7b-{uuid.uuid4().hex[:8]}"
        for replica in ("a", "b"):  # each counts its own requests: every 10th is held
            script(url, model, replica, {"ttft_ms": 1000}, every=10)
        script(url, model, None, {"ttft_ms": 20})
        route = Route(cfg(model, [f"{url}/r/a/vllm/v1", f"{url}/r/b/vllm/v1"], 1,
                          hedge_after_ms=hedge))
        records = Records()
        decide = decider(NluService(Upstreams(client), lambda route=route: route, records))
        name = "no hedging" if hedge is None else f"hedge_after_ms={hedge}"
        res = await drive(name, decide, seconds, in_flight, records)
        print(res.after(1.0).line())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--only", type=int, choices=(1, 2, 3, 4, 5))
    parser.add_argument("--redis", metavar="URL", help="scenario 5's Redis (default "
                        "CALLOUT_REDIS_URL, else redis://127.0.0.1:6379/0)")
    parser.add_argument("--litellm", metavar="PYTHON",
                        help="an interpreter with litellm installed: scenario 1 through its "
                             "Router too (bench/litellm_router.py)")
    args = parser.parse_args()
    proc, url = start_emulator()
    client = LLMClient()
    try:
        if args.only in (None, 1):
            await scenario_1(url, client, args.seconds, args.in_flight, args.litellm)
        if args.only in (None, 2):
            await scenario_2(url, client)
        if args.only in (None, 3):
            await scenario_3(url, client, args.seconds, args.in_flight)
        if args.only in (None, 4):
            await scenario_4(url, client, args.seconds, args.in_flight)
        if args.only in (None, 5):
            import bench_pools_workers  # this directory: bench/bench_pools_workers.py

            await bench_pools_workers.scenario_5(url, client, args.seconds, args.in_flight,
                                                 args.redis, sys.modules[__name__])
    finally:
        await client.aclose()
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())
