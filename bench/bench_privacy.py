"""What redacting the call log costs its writer, and whether it slows a decision.

    .venv/bin/python bench/bench_privacy.py [--seconds 5] [--rate 1000]

The records are those of the decision bench_nlu.py sends (a Chinese node, two intents, one
slot, one turn of context), with its inputs and decision; one in four holds a mobile number
in the utterance and the slot (a customer giving a new number), the rest are clean.

1. The writer's preparation of a batch of 200 such records (`calllog.redact.prepare`), in
   µs per record: redaction off (`[privacy] redact = false`: the inputs are dumped when the
   batch is written, as before), and on.
2. The event loop while the writer works at `--rate` records a second (batches of 200, as
   `[diagnostics] batch_size`): a ticker asks for a 1 ms sleep over and over and records how
   late it wakes (what a decision arriving then would wait for the loop), p50 / p99 / max,
   with redaction off; on, the whole batch at once on the loop; on, in a worker thread (what
   the writer does); and on, 16 records at a time on the loop with a yield between. All
   variants in one run, alternated.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from bench_nlu import DECIDE

from callout_server.calllog import redact
from callout_server.calllog.inputs import NluInputs
from callout_server.calllog.records import CallRecord
from callout_server.privacy import Privacy
from callout_server.tiers.nlu.schemas import DecideRequest

BATCH = 200
ON = Privacy(b"k" * 32)
OFF = Privacy.off()


def batch(n: int = BATCH) -> list[CallRecord]:
    clean = DecideRequest.model_validate(DECIDE)
    phone = DecideRequest.model_validate(DECIDE | {"utterance": "换个号吧，138 7283 7651，白天都在"})
    out = []
    for i in range(n):
        personal = i % 4 == 0
        decision = {"intent": "agree", "fallback": False, "code": "ok", "confidence": 0.9,
                    "slots": {"time": "13872837651" if personal else "明天下午三点以后"}}
        out.append(CallRecord(tier="nlu", code="ok", call_id=f"c-{i}", node_id="confirm_time",
                              inputs=NluInputs(phone if personal else clean, decision, 120.0)))
    return out


def rows(records: list[CallRecord]) -> None:
    """What the insert then builds (the inputs row's JSON): the same work both ways."""
    for rec in records:
        rec.input_row()


def prep_cost(privacy: Privacy, rounds: int = 15) -> float:
    per: list[float] = []
    for _ in range(rounds):
        records = batch()
        start = time.process_time()
        if privacy.enabled:
            done = redact._redact_all(records, privacy)
            for rec, d in zip(records, done, strict=True):
                redact.apply(rec, d)
        rows(records)
        per.append((time.process_time() - start) / BATCH * 1e6)
    return statistics.median(per)


async def writer(privacy: Privacy, mode: str, rate: float, stop: asyncio.Event) -> None:
    interval = BATCH / rate
    while not stop.is_set():
        records = batch()
        if mode in ("thread", "slices"):
            await redact.prepare(records, privacy, in_thread=mode == "thread")
        elif privacy.enabled:  # on the loop, the batch at once
            for rec, d in zip(records, redact._redact_all(records, privacy), strict=True):
                redact.apply(rec, d)
        rows(records)
        await asyncio.sleep(interval)


async def lag(privacy: Privacy, mode: str, seconds: float, rate: float) -> list[float]:
    stop = asyncio.Event()
    task = asyncio.create_task(writer(privacy, mode, rate, stop))
    late: list[float] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        t0 = time.perf_counter()  # uvloop's loop.time() counts whole milliseconds
        await asyncio.sleep(0.001)
        late.append((time.perf_counter() - t0 - 0.001) * 1000)
    stop.set()
    await task
    return late


async def main(args: argparse.Namespace) -> None:
    print(f"writer preparation, µs per record (batches of {BATCH}, one in four with a mobile):")
    print(f"  redaction off: {prep_cost(OFF):7.1f}   on: {prep_cost(ON):7.1f}")
    variants = {"off": (OFF, "loop"), "on, whole batch": (ON, "loop"),
                "on, in a thread": (ON, "thread"), "on, 16 at a time": (ON, "slices")}
    lags: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (privacy, mode) in variants.items():
            lags[name] += await lag(privacy, mode, args.seconds / args.rounds, args.rate)
    print(f"event-loop lag while the writer handles {args.rate:.0f} records/s (ms late):")
    print(f"  {'variant':<18} {'p50':>6} {'p99':>7} {'max':>7}")
    for name, values in lags.items():
        values.sort()
        p99 = values[int(len(values) * 0.99)]
        print(f"  {name:<18} {statistics.median(values):6.3f} {p99:7.3f} {values[-1]:7.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0, help="per variant, in total")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rate", type=float, default=1000.0, help="records a second")
    import uvloop

    uvloop.install()
    asyncio.run(main(parser.parse_args()))
