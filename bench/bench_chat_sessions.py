"""Chat sessions in Redis: what a turn pays for them, and a cancel's trip to another worker.

Run from the repository root (Redis at 127.0.0.1:6379, nothing else needed):

    .venv/bin/python bench/bench_chat_sessions.py [--turns 2000] [--history 10]

Two `ChatService`s in one process stand for two workers (their own copies, one Redis, one
channel each). A session holds a 2 KB system prompt, two tools and `--history` completed
turns (a user line and an answer of ~60 characters each). What a turn pays, per turn, off
the token path (the model's tokens touch no Redis):
  local       the in-process store (no Redis: today's single worker), the reference;
  same        turns on one worker: take the lease, see the stored copy is ours (one HMGET,
              nothing decrypted), and after the turn save it (dump, encrypt, one script that
              also releases the lease);
  alternate   turns alternating two workers: as `same`, and each load decrypts and rebuilds
              the session the other worker saved.
Cancel: a worker that does not run the turn asks the one that does (holder lookup, publish,
the holder's answer on the asker's channel), the round trip measured to the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callout_server.config.secrets import SecretBox
from callout_server.config.settings import ChatSettings
from callout_server.llm import LLMClient
from callout_server.tiers.chat import calls
from callout_server.tiers.chat.schemas import SessionCreate
from callout_server.tiers.chat.service import ChatService
from callout_server.upstream import Upstreams

REDIS = "redis://127.0.0.1:6379/0"
KEY = "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA="
TOOLS = [{"type": "function", "name": f"tool_{n}", "description": "查询订单状态" * 5,
          "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
         for n in range(2)]


async def share_in_redis(chat: ChatService, prefix: str) -> None:
    """`chat` keeps its sessions in the local Redis under `prefix`, as a worker with
    CALLOUT_REDIS_URL set does (also bench_chat_stream.py --redis)."""
    await calls.share_in_redis(chat, REDIS, prefix, SecretBox(KEY), ttl_s=1800, lease_s=70)


async def worker(prefix: str, shared: bool = True) -> ChatService:
    chat = ChatService(Upstreams(LLMClient()), lambda: None, ChatSettings())  # type: ignore[arg-type, return-value]
    if shared:
        await share_in_redis(chat, prefix)
    return chat


def fill(chat: ChatService, call_id: str, turns: int) -> None:
    history = chat.sessions[call_id].history
    for n in range(turns):
        history.add_user_message(f"h{n}", "我想问一下我的订单什么时候能到，麻烦帮我查一下。", 0)
        history.add_assistant_message("好的，您的订单预计明天下午送达，请保持电话畅通，谢谢。" * 2)


async def one_turn(chat: ChatService, call_id: str, n: int) -> tuple[float, float]:
    """What a turn pays for its session (no model call): on its path (the lease and the
    session before the model is asked, the state taken after `end`), and with the save,
    which runs after `end` in the background."""
    started = time.perf_counter()
    shared = chat.shared
    if shared is not None:
        session = await shared.claim(call_id, "superseded")
    else:
        session = chat.get(call_id)
    claimed = time.perf_counter()
    session.history.add_user_message(f"t{n}", "那我明天下午在家等着。", 0)
    session.begin_turn(f"t{n}", 0)
    session.history.add_assistant_message("好的，祝您生活愉快。")
    session.history.trim_if_needed()
    ended = time.perf_counter()
    if shared is not None:
        shared.ended(session)
    on_path = (claimed - started) + (time.perf_counter() - ended)
    if shared is not None:
        await shared.drain()
    return on_path, time.perf_counter() - started


def line(name: str, xs: list[float]) -> str:
    xs = sorted(x * 1000 for x in xs)
    p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
    return f"{name:15s} p50 {statistics.median(xs):6.3f} ms  p99 {p99:6.3f} ms  (n={len(xs)})"


async def main(turns: int, history: int) -> None:
    prefix = f"bench-chat-{time.time_ns()}"
    spec = SessionCreate(call_id="c", system_prompt="你是一名礼貌的客服坐席。" * 170,
                         tools=TOOLS, history_turns=max(history, 1) * 2)
    local = await worker(prefix, shared=False)
    local.create_session(spec)
    fill(local, "c", history)
    a, b = await worker(prefix), await worker(prefix)
    await calls.create(a, spec)
    fill(a, "c", history)
    session = await a.shared.claim("c", "superseded")  # type: ignore[union-attr]
    a.shared.ended(session)  # type: ignore[union-attr]
    await a.shared.drain()  # type: ignore[union-attr]
    size = len(str(a.sessions["c"].history.dump()))
    print(f"session: {size} characters of history state, {len(spec.system_prompt)} of prompt")

    results: dict[str, list[float]] = {}
    for n in range(turns):  # interleaved, so the three see the same machine
        for name, chat in (("local", local), ("same", a), ("alternate", a if n % 2 else b)):
            on_path, total = await one_turn(chat, "c", n)
            results.setdefault(f"{name} path", []).append(on_path)
            results.setdefault(f"{name} +save", []).append(total)
    for name, xs in results.items():
        print(line(name, xs))

    # Cancel across workers: `a` holds the turn's lease, `b` is asked to cancel.
    rtts = []
    for _ in range(min(turns, 1000)):
        held = await a.shared.claim("c", "superseded")  # type: ignore[union-attr]
        started = time.perf_counter()
        await b.shared.cancel_elsewhere("c", None)  # type: ignore[union-attr]
        rtts.append(time.perf_counter() - started)
        await a.shared.release_unused(held)  # type: ignore[union-attr]
    print(line("cancel", rtts))
    for chat in (a, b):
        await chat.shared.bus.stop()  # type: ignore[union-attr]
        await chat.shared.store.delete("c")  # type: ignore[union-attr]
        await chat.shared.store.aclose()  # type: ignore[union-attr]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--history", type=int, default=10)
    args: Any = parser.parse_args()
    asyncio.run(main(args.turns, args.history))
