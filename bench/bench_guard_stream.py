"""The speech guard on the chat stream: what it adds per sentence, and how fast a lexicon
reaches every worker.

    .venv/bin/python bench/bench_guard_stream.py [--turns 300] [--propagations 10]
        [--pg postgresql+asyncpg://postgres@127.0.0.1:5432] [--redis redis://127.0.0.1:6379/0]

`--turns 0` runs (3) alone. The workers run the code of the checkout the script is in (its
directory is their working directory), so a copy of an older commit with this script in it
measures that commit: `git archive <commit> | tar -x -C /tmp/before`, copy this file there,
`cd /tmp/before && /path/to/.venv/bin/python bench/bench_guard_stream.py --turns 0`.

(1) Boundary token -> `sentence` event, in process: a `TurnRun` fed by a scripted stream
    (no network), the time from handing the stream's boundary token to the turn until the
    consumer of `run.events()` holds the sentence. No guard, a 10,000-term lexicon, and the
    lexicon with `mask_pii`, interleaved turn by turn in the same run; medians and p90 of
    every sentence (the first one apart), and the median added by the guard.
(2) Lexicon load: compiling a 10,000-term lexicon (what a worker's reload does once per
    change, in a thread), CPU time.
(3) Propagation across two real workers (PostgreSQL + Redis): PUT a 10,000-term lexicon on
    A, time until B's `POST /api/admin/lexicons/try` finds a term of the new version.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import asyncpg  # noqa: E402
import httpx  # noqa: E402
from bench_guards import han_terms  # noqa: E402
from bench_propagation import ADMIN, SECRET_KEY, start_worker, wait_ready  # noqa: E402

from callout_server.db.migrate import upgrade_to_head  # noqa: E402
from callout_server.lexicons.book import CompiledLexicon, LexiconBook  # noqa: E402
from callout_server.llm import Finish, TextDelta  # noqa: E402
from callout_server.phrases import Lexicon, warm  # noqa: E402
from callout_server.tiers.chat.guard import GuardSpec, SpeechGuard  # noqa: E402
from callout_server.tiers.chat.history import ChatHistory  # noqa: E402
from callout_server.tiers.chat.turn import TurnProgress, TurnRun  # noqa: E402

REPLY = ["您好", "，我是", "客服", "小王", "。", "今天", "给您", "来电", "是想", "确认", "订单", "。",
         "您的", "包裹", "已经", "发出", "了", "。", "预计", "明天", "下午", "送达", "。",
         "请问", "还有", "别的", "问题", "吗", "？"]
BOUNDARIES = {"。", "？"}


class ScriptedStream:
    """A PoolStream stand-in: yields REPLY, noting when each boundary token is handed over."""

    def __init__(self, marks: list[float]) -> None:
        self.marks = marks
        self.text = ""
        self.usage = None

    async def __aenter__(self) -> ScriptedStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def report(self, diagnostic: Any) -> None:
        return None

    def __aiter__(self) -> Any:
        return self._events()

    async def _events(self) -> Any:
        for token in REPLY:
            await asyncio.sleep(0)  # a token arrives: the loop turns as with a socket
            self.text += token
            if token in BOUNDARIES:
                self.marks.append(time.perf_counter())
            yield TextDelta(token)
        yield Finish("stop")


async def one_turn(guard: SpeechGuard | None) -> list[float]:
    marks: list[float] = []
    run = TurnRun(ChatHistory(None, size=10), call_id="b", turn_id="t", output="audio",
                  progress=TurnProgress(), open_stream=lambda: ScriptedStream(marks),  # type: ignore[arg-type,return-value]
                  record=lambda *a: None, on_tool_call=lambda *a: None, on_end=lambda r: None,
                  batch_sentences=1, first_clause_min_chars=None, apology="", guard=guard)
    run.start()
    got: list[float] = []
    async for event in run.events():
        if event.name == "sentence":
            got.append(time.perf_counter())
    return [(g - m) * 1e3 for m, g in zip(marks, got, strict=True)]


def lexicon_book(terms: list[str]) -> LexiconBook:
    return LexiconBook([CompiledLexicon("finance", "replace", "具体以合同为准。", 1, datetime.now(UTC),
                                        Lexicon(terms, allow=["确保本月", *terms[:99]]))])


def stats(label: str, ms: list[float], base: float | None = None) -> float:
    med = statistics.median(ms)
    p90 = sorted(ms)[int(len(ms) * 0.9)]
    added = f"   +{(med - base) * 1e3:6.1f} µs" if base is not None else ""
    print(f"  {label:40s} n={len(ms):<5d} median {med * 1e3:7.1f} µs  p90 {p90 * 1e3:7.1f} µs{added}")
    return med


async def part1(turns: int, terms: list[str]) -> None:
    book = lexicon_book(terms)
    modes: dict[str, SpeechGuard | None] = {
        "none": None,
        "10,000-term lexicon": SpeechGuard(GuardSpec(lexicons=["finance"]), lambda: book),
        "10,000 terms + mask_pii": SpeechGuard(GuardSpec(lexicons=["finance"], mask_pii=True),
                                               lambda: book)}
    every: dict[str, list[float]] = {m: [] for m in modes}
    first: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(20):  # warm-up: caches, the converter
        for guard in modes.values():
            await one_turn(guard)
    for _ in range(turns):
        for mode, guard in modes.items():  # interleaved: the machine's load hits all alike
            delays = await one_turn(guard)
            first[mode].append(delays[0])
            every[mode].extend(delays)
    print(f"(1) boundary token -> `sentence` event, {turns} turns x {len(every['none']) // turns} sentences")
    base = stats("every sentence, none", every["none"])
    for mode in list(modes)[1:]:
        stats(f"every sentence, {mode}", every[mode], base)
    base = stats("first sentence, none", first["none"])
    for mode in list(modes)[1:]:
        stats(f"first sentence, {mode}", first[mode], base)


def part2(terms: list[str]) -> None:
    loads = []
    for _ in range(5):
        t = time.process_time()
        Lexicon(terms, allow=["确保本月", *terms[:99]])
        loads.append((time.process_time() - t) * 1e3)
    print(f"(2) compile a {len(terms)}-term lexicon: median {statistics.median(loads):.1f} ms CPU "
          f"(5 builds, min {min(loads):.1f})")


async def part3(args: argparse.Namespace, terms: list[str]) -> None:
    name = f"callout_bench_{secrets.token_hex(4)}"
    dsn = args.pg.replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(f"{dsn}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    db_url = f"{args.pg}/{name}"
    env = {"CALLOUT_CONFIG": str(ROOT / "config.toml"), "CALLOUT_DATABASE_URL": db_url,
           "CALLOUT_ADMIN_TOKEN": ADMIN["Authorization"].split()[1],
           "CALLOUT_SERVICE_TOKEN": "bench-service-token-0123456789",
           "CALLOUT_ADMIN_USER": "admin", "CALLOUT_ADMIN_PASSWORD": "bench-pass-123",
           "CALLOUT_SECRET_KEY": SECRET_KEY, "CALLOUT_REDIS_URL": args.redis,
           "CALLOUT_REDIS_CHANNEL_PREFIX": f"bench-{secrets.token_hex(4)}"}
    procs = []
    try:
        await asyncio.to_thread(upgrade_to_head, db_url)
        with tempfile.TemporaryDirectory() as tmp:
            procs = [start_worker(env, Path(tmp) / f"{n}.log") for n in ("a", "b")]
            (_, a), (_, b) = procs
            put_ms, seen_ms = [], []
            async with httpx.AsyncClient(timeout=30, headers=ADMIN) as c:
                await wait_ready(c, a)
                await wait_ready(c, b)
                for i in range(args.propagations):
                    marker = f"标记词{i:03d}"
                    body = {"terms": [*terms[:-1], marker], "action": "drop"}
                    t0 = time.perf_counter()
                    r = await c.put(f"{a}/api/admin/lexicons/bench", json=body)
                    r.raise_for_status()
                    put_ms.append((time.perf_counter() - t0) * 1e3)
                    while True:
                        r = await c.post(f"{b}/api/admin/lexicons/try", json={"text": marker})
                        if r.status_code == 200 and r.json()["action"] == "drop":
                            break
                        await asyncio.sleep(0.005)
                    seen_ms.append((time.perf_counter() - t0) * 1e3)
        print(f"(3) a {len(terms)}-term lexicon saved on A, checked by B, {args.propagations} saves")
        print(f"  PUT on A (write, audit, A's own reload): median {statistics.median(put_ms):.0f} ms, "
              f"max {max(put_ms):.0f} ms")
        print(f"  PUT sent -> B finds the new term:        median {statistics.median(seen_ms):.0f} ms, "
              f"max {max(seen_ms):.0f} ms")
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(10)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--propagations", type=int, default=10)
    ap.add_argument("--pg", default="postgresql+asyncpg://postgres@127.0.0.1:5432")
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = ap.parse_args()
    warm()
    terms = [*han_terms(9_995), "保本", "稳赚", "零风险", "保证收益", "稳赚不赔"]
    if args.turns:
        await part1(args.turns, terms)
        part2(terms)
    if args.propagations:
        await part3(args, terms)


if __name__ == "__main__":
    asyncio.run(main())
