"""The repository's nginx configuration (deploy/nginx/nginx.conf), run by Debian's nginx in
front of two real workers on PostgreSQL and Redis, everything round-robin:

- NLU decisions alternate workers;
- a chat call's turns alternate workers, each with the whole history, streamed unbuffered;
  the worker streaming a turn is killed with SIGKILL and the next turn continues on the
  other from the last completed turn; the killed worker, restarted, rejoins;
- a worker killed with SIGKILL mid-decision costs no decision (nginx sends it to the other).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.app import REPO_ROOT, free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
from tests.support.chat import LONG, read_sse, the_end
from tests.support.nlu import DECIDE, answer, decide_body

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="Debian's nginx is not installed")
CONF = REPO_ROOT / "deploy" / "nginx" / "nginx.conf"


def render(workers: list[Any], port: int) -> str:
    """The repository's file with this test's port and workers: nothing else changed."""
    text = CONF.read_text()
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    for i, worker in enumerate(workers, start=1):
        text = text.replace(f"server app{i}:8080", f"server 127.0.0.1:{worker.port}")
    assert "app1" not in text and "app2" not in text
    return text


def spawn_nginx(tmp: Path, workers: list[Any], port: int) -> subprocess.Popen[bytes]:
    (tmp / "logs").mkdir(parents=True, exist_ok=True)
    conf = tmp / "nginx.conf"
    conf.write_text(render(workers, port))
    with open(tmp / "nginx.err", "wb") as err:  # the child keeps its own descriptor
        return subprocess.Popen(
            [NGINX, "-p", str(tmp), "-c", str(conf), "-e", "stderr",
             "-g", f"daemon off; pid {tmp / 'nginx.pid'};"],
            stdout=subprocess.DEVNULL, stderr=err)


async def start_nginx(tmp: Path, workers: list[Any]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = spawn_nginx(tmp, workers, port)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    async with httpx.AsyncClient(timeout=1) as c:
        while True:
            try:
                if (await c.get(f"{url}/healthz")).status_code in (200, 503):
                    return proc, url
            except httpx.TransportError:
                pass
            assert proc.poll() is None, (tmp / "nginx.err").read_text()
            assert time.monotonic() < deadline, "nginx did not start"
            await asyncio.sleep(0.05)


async def metric_sum(c: httpx.AsyncClient, worker: Any, series: str) -> float:
    """The sum of a metric's series on one worker's /metrics (`series`: a regex for the
    name and labels, e.g. `callout_nlu_decisions_total\\{[^}]*\\}`)."""
    text = (await c.get(f"{worker.url}/metrics")).text
    return sum(float(v) for v in re.findall(rf"^{series} (\S+)$", text, re.M))


async def decisions(c: httpx.AsyncClient, worker: Any) -> float:
    return await metric_sum(c, worker, r"callout_nlu_decisions_total\{[^}]*\}")


async def chat_calls(c: httpx.AsyncClient, worker: Any) -> float:
    return await metric_sum(c, worker, r'callout_llm_requests_total\{[^}]*tier="chat"[^}]*\}')


async def _grew(c: httpx.AsyncClient, workers: tuple[Any, ...], before: list[float],
                by: list[int]) -> bool:
    return [await chat_calls(c, w) - b for w, b in zip(workers, before, strict=True)] == by


async def _streaming(c: httpx.AsyncClient, workers: tuple[Any, ...]) -> Any:
    """The worker with a call in flight to the model (the turn it streams), or None."""
    for worker in workers:
        if await metric_sum(c, worker, r"callout_upstream_in_flight\{[^}]*\}") > 0:
            return worker
    return None


async def _read_turn(c: httpx.AsyncClient, call_id: str, turn_id: str, text: str) -> str:
    """A turn through the balancer: its end reason, or "cut" when the stream broke off."""
    try:
        async with c.stream("POST", f"/api/chat/sessions/{call_id}/turns",
                            headers=SERVICE_HEADERS,
                            json={"turn_id": turn_id, "text": text}) as resp:
            assert resp.status_code == 200, await resp.aread()
            events = [e async for e in read_sse(resp)]
    except httpx.HTTPError:
        return "cut"
    ends = [e for e in events if e.name == "end"]
    return str(ends[-1].data["reason"]) if ends else "cut"


async def until(check: Callable[[], Awaitable[Any]], timeout_s: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (result := await check()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)
    return result


async def test_two_workers_behind_nginx(start_worker: Any, emulator: Any, tmp_path: Path) -> None:
    nlu_model, chat_model = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(nlu_model, {"content": answer("agree")})
    one, two = await start_worker("one"), await start_worker("two")
    proc, lb = await start_nginx(tmp_path / "nginx", [one, two])
    try:
        async with httpx.AsyncClient(base_url=lb, timeout=30) as c:
            for tier, model in (("nlu", nlu_model), ("chat", chat_model)):
                r = await c.post("/api/admin/llm-configs", headers=ADMIN_HEADERS,
                                 json=llm_config_body(tier=tier, model=model, is_active=True,
                                                      base_url=emulator.base_url("vllm")))
                assert r.status_code == 201, r.text

            async def serving(worker: Any) -> bool:
                items = (await c.get(f"{worker.url}/api/admin/llm-configs",
                                     headers=ADMIN_HEADERS)).json()["items"]
                return {i["model"] for i in items if i["is_active"]} >= {nlu_model, chat_model}

            for worker in (one, two):
                await until(lambda w=worker: serving(w))

            # NLU: round-robin, both workers decide.
            before = [await decisions(c, w) for w in (one, two)]
            for _ in range(10):
                r = await c.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
                assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
            after = [await decisions(c, w) for w in (one, two)]
            assert [a - b for a, b in zip(after, before, strict=True)] == [5, 5]

            # Chat: round-robin too (sessions in Redis): turns alternate workers, each
            # with the whole history, and the stream arrives as it is sent.
            r = await c.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                             json={"call_id": "c-lb-1", "system_prompt": "你是客服"})
            assert r.status_code == 201, r.text
            before = [await chat_calls(c, w) for w in (one, two)]
            for n in range(4):
                if n:  # the first reply keeps the emulator's pacing (~2 s), the others quick
                    await emulator.script(chat_model, {"content": f"第{n}轮的回答。"}, times=1)
                started = time.perf_counter()
                arrivals: list[float] = []
                async with c.stream("POST", "/api/chat/sessions/c-lb-1/turns",
                                    headers=SERVICE_HEADERS,
                                    json={"turn_id": f"t{n}", "text": f"第{n}句"}) as resp:
                    assert resp.status_code == 200
                    events = [e async for e in read_sse(resp)]
                    arrivals = [e.at - started for e in events]
                assert the_end(events)["reason"] == "completed"
                if not n:  # nginx buffered nothing: the first event came well before the last
                    assert len(arrivals) >= 3 and arrivals[-1] - arrivals[0] > 0.5, arrivals
            sent = (await emulator.requests(chat_model))[-1]["body"]["messages"]
            assert [m["content"] for m in sent][-3:] == ["第2句", "第2轮的回答。", "第3句"]
            assert len(sent) == 8  # the system prompt and three turns before this one
            await until(lambda: _grew(c, (one, two), before, [2, 2]))

            # The worker streaming a turn is killed: the next turn, on the other worker,
            # continues from the last completed one; the killed one restarted rejoins.
            await emulator.script(chat_model, LONG, times=1)
            killed = asyncio.ensure_future(_read_turn(c, "c-lb-1", "t4", "第4句"))
            victim = await until(lambda: _streaming(c, (one, two)))
            victim.proc.send_signal(signal.SIGKILL)
            victim.proc.wait(timeout=10)
            assert await asyncio.wait_for(killed, 10) != "completed"
            survivor = two if victim is one else one
            await emulator.script(chat_model, {"content": "第5轮的回答。"}, times=1)
            assert await _read_turn(c, "c-lb-1", "t5", "第5句") == "completed"
            contents = [m["content"] for m in (await emulator.requests(chat_model))[-1]
                        ["body"]["messages"]]
            assert "第4句" not in contents and contents[-3:] == ["第3句", "第3轮的回答。", "第5句"]
            restarted = await start_worker("restarted", port=victim.port)
            await until(lambda: serving(restarted))
            base = await decisions(c, restarted)

            async def rejoined() -> bool:
                r = await c.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
                assert r.status_code == 200, r.text
                return await decisions(c, restarted) > base

            await until(rejoined)  # nginx tries it again once its 2 s of failure are over
            one, two = (restarted, survivor) if victim is one else (survivor, restarted)

            # A worker killed mid-decision: nginx gives the decision to the other one.
            await c.delete(f"{emulator.url}/_emulator/scripts", params={"model": nlu_model})
            await emulator.script(nlu_model, {"content": answer("agree"), "ttft_ms": 800},
                                  times=2)
            await emulator.script(nlu_model, {"content": answer("agree")})
            pending = [asyncio.ensure_future(
                c.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())) for _ in range(2)]
            deadline = time.monotonic() + 10
            while sum(1 for x in await emulator.requests(nlu_model)
                      if x["finished_at"] is None) < 2:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            one.proc.send_signal(signal.SIGKILL)  # one of the two decisions was on it
            one.proc.wait(timeout=10)
            for r in await asyncio.gather(*pending):
                assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
            for _ in range(6):
                r = await c.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
                assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
