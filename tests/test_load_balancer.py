"""The repository's nginx configuration (deploy/nginx/nginx.conf), run by Debian's nginx in
front of two real workers on PostgreSQL and Redis: NLU decisions alternate workers, a chat
call's requests stay on one worker and its stream arrives unbuffered, and a worker killed
with SIGKILL mid-decision costs no decision (nginx sends it to the other worker).

A chat call surviving its worker (sessions in Redis) is tested without nginx, on two real
workers addressed in turn: tests/test_chat_shared.py.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.app import REPO_ROOT, free_port
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body
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


async def decisions(c: httpx.AsyncClient, worker: Any) -> float:
    text = (await c.get(f"{worker.url}/metrics")).text
    return sum(float(v) for v in re.findall(r"^callout_nlu_decisions_total\{[^}]*\} (\S+)$",
                                             text, re.M))


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
                deadline = time.monotonic() + 10
                while not await serving(worker):
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.05)

            # NLU: round-robin, both workers decide.
            before = [await decisions(c, w) for w in (one, two)]
            for _ in range(10):
                r = await c.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
                assert r.status_code == 200 and r.json()["intent"] == "agree", r.text
            after = [await decisions(c, w) for w in (one, two)]
            assert [a - b for a, b in zip(after, before, strict=True)] == [5, 5]

            # Chat: one call's requests on one worker; the stream arrives as it is sent.
            r = await c.post("/api/chat/sessions", params={"call_id": "c-lb-1"},
                             headers=SERVICE_HEADERS, json={"call_id": "c-lb-1"})
            assert r.status_code == 201, r.text
            for n in range(2):
                started = time.perf_counter()
                arrivals: list[float] = []
                async with c.stream("POST", "/api/chat/sessions/c-lb-1/turns",
                                    headers=SERVICE_HEADERS,
                                    json={"turn_id": f"t{n}", "text": "您好"}) as resp:
                    assert resp.status_code == 200
                    async for line in resp.aiter_lines():
                        if line.startswith("event:"):
                            arrivals.append(time.perf_counter() - started)
                assert len(arrivals) >= 3
                # The emulator paces a reply over ~2 s: the first event came well before
                # the last (nginx buffered nothing).
                assert arrivals[-1] - arrivals[0] > 0.5, arrivals

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
