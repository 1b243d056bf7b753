"""What a worker's log says, read as ops read it: a real `serve` process, stopped with SIGTERM.

uvicorn re-raises SIGTERM once it has shut down gracefully, and the default action ends the
process there, before `atexit`: lines still queued for the background writer thread were
lost (the last ones: "Application shutdown complete", and the count of call-log records
the database never got). A streamed model call is no INFO line of httpx's either.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import httpx

from tests.fixtures.app import free_port
from tests.fixtures.database import SERVICE_HEADERS
from tests.fixtures.tcp_proxy import TcpProxy


async def _stream_a_turn(client: httpx.AsyncClient, url: str) -> None:
    r = await client.post(f"{url}/api/chat/sessions", headers=SERVICE_HEADERS,
                          json={"call_id": "log-1", "system_prompt": "你是客服"})
    assert r.status_code == 201, r.text
    async with client.stream("POST", f"{url}/api/chat/sessions/log-1/turns",
                             headers=SERVICE_HEADERS,
                             json={"turn_id": "t1", "text": "你好"}) as resp:
        body = "".join([chunk async for chunk in resp.aiter_text()])
    assert '"reason":"completed"' in body, body


async def test_the_last_lines_reach_the_log_after_sigterm(
        start_worker: Any, pg_url: str, emulator: Any) -> None:
    proxy = TcpProxy()
    await proxy.start()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    try:
        worker = await start_worker(
            "w", database_url=proxy.url_for(pg_url), CALLOUT_NLU_BASE_URL=dead,
            CALLOUT_CHAT_BASE_URL=emulator.base_url())
        async with httpx.AsyncClient(timeout=30) as client:
            await _stream_a_turn(client, worker.url)
            proxy.cut(refuse=True)  # the database goes away: records wait in the queue
            for i in range(3):
                r = await client.post(f"{worker.url}/api/nlu/decide", headers=SERVICE_HEADERS,
                                      json={"call_id": f"c{i}", "utterance": "好的",
                                            "intents": [{"name": "agree"}],
                                            "fallback_intent": "agree"})
                assert r.status_code == 200 and r.json()["fallback"] is True, r.text
        worker.proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(worker.proc.wait, 30)
        assert worker.proc.returncode == -signal.SIGTERM  # uvicorn's own re-raise
    finally:
        await proxy.stop()
    lines = worker.log_path.read_text().splitlines()
    assert not [x for x in lines if " httpx " in x or "HTTP Request:" in x]
    tail = "\n".join(lines[-8:])
    assert "records not written at shutdown" in tail, tail
    assert "Application shutdown complete." in tail, tail
    assert "Finished server process" in lines[-1], tail
