"""Scenario 1 of bench_pools.py through LiteLLM's Router, for comparison (optional).

Run by `bench/bench_pools.py --litellm PYTHON`, where PYTHON is an interpreter that has
`litellm` installed (kept out of the project's dependencies: it is only measured here):

    python3 -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install litellm
    .venv/bin/python bench/bench_pools.py --only 1 --litellm /tmp/litellm-venv/bin/python

Arguments: emulator URL, model, dead replica URL, seconds, in flight. The three replicas are
one model group; the Router is set up as a team would for this: shuffle routing, 3
retries, a 5 s cool-down after 3 failures, and 0.4 s per attempt so that a retry elsewhere
still fits the call's 1.5 s. Settings tried first did worse here: 1.5 s per attempt (a call
that meets the slow replica times out: 0 % answered after the first second), and
latency-based routing with a cool-down after one failure (15 %: under 16 calls in flight
every deployment ends up cooling down). A call counts as answered when a completion comes
back within 1.5 s. Prints one JSON line of figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from the internet

from litellm import Router

PROMPT = [{"role": "system", "content": "Decide the intent. Answer one JSON object."},
          {"role": "user", "content": "明天下午三点以后都可以"}]


async def main() -> None:
    url, model, dead, seconds, in_flight = sys.argv[1:6]
    bases = [f"{url}/r/ok/vllm/v1", dead, f"{url}/r/slow/vllm/v1"]
    router = Router(
        model_list=[{"model_name": "nlu", "litellm_params": {
            "model": f"openai/{model}", "api_base": base, "api_key": "sk-none",
            "timeout": 0.4, "stream_timeout": 0.4, "max_retries": 0}} for base in bases],
        routing_strategy="simple-shuffle", num_retries=3, allowed_fails=3,
        cooldown_time=5, timeout=1.5, retry_after=0)
    started: list[float] = []
    latency: list[float] = []
    answered: list[bool] = []
    t0 = time.perf_counter()
    stop = t0 + float(seconds)

    async def worker() -> None:
        while time.perf_counter() < stop:
            s = time.perf_counter()
            ok = False
            try:
                async with asyncio.timeout(1.5):
                    await router.acompletion(model="nlu", messages=PROMPT, max_tokens=100,
                                             temperature=0.1)
                ok = True
            except Exception:  # any failure is "not answered"
                ok = False
            started.append(s - t0)
            latency.append((time.perf_counter() - s) * 1000)
            answered.append(ok)

    await asyncio.gather(*(worker() for _ in range(int(in_flight))))
    keep = [i for i, s in enumerate(started) if s >= 1.0]
    lat = sorted(latency[i] for i in keep)
    n = len(lat)
    print(json.dumps({
        "calls": n, "answered": 100 * sum(answered[i] for i in keep) / n if n else 0.0,
        "p50": statistics.median(lat) if lat else None,
        "p99": lat[min(n - 1, int(n * 0.99))] if lat else None}))


if __name__ == "__main__":
    asyncio.run(main())
