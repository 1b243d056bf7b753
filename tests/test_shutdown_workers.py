"""SIGTERM to `serve --workers 2`: every open stream on either worker ends `cancelled` at
once, and the supervisor and both workers are gone in bounded time.

A real `serve --workers 2` process with Redis-shared chat sessions holds chat turns whose
model talks for ever; streams are opened until each worker holds at least one (which worker
accepts a connection is the kernel's choice: the test reads it off /proc). At SIGTERM to the
supervisor (what a container runtime sends): each client gets exactly one `end`, reason
`cancelled`, within a second and a half; every upstream request is closed; the call log has
a record per turn; the process tree is gone within the grace plus slack.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx

from callout_server.db.engine import Database
from tests.fixtures.app import ServerProcess
from tests.fixtures.calllog import stored, wait_until
from tests.fixtures.database import SERVICE_HEADERS, reset_tables
from tests.fixtures.database import test_env as worker_env
from tests.fixtures.processes import clients_held, worker_pids
from tests.test_shutdown_streams import GRACE_S, Vendor, sigterm_and_read

MAX_STREAMS = 24


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_sigterm_to_two_workers_ends_every_stream_and_the_whole_tree_exits(
        upstream: Any, pg_url: str, redis_url: str, redis_prefix: str, tmp_path: Path) -> None:
    vendor = Vendor()
    upstream.reply = vendor
    await reset_tables(pg_url)
    env = {**worker_env(pg_url, redis_url, redis_prefix), "CALLOUT_SHUTDOWN_GRACE_S": str(GRACE_S),
           "CALLOUT_CHAT_BASE_URL": upstream.base_url}
    server = ServerProcess(env, tmp_path / "two-workers.log", "two-workers",
                           args=["--workers", "2"])
    try:
        await server.wait_ready()
        await wait_until(lambda: len(worker_pids(server.proc.pid)) == 2, timeout_s=30)
        workers = worker_pids(server.proc.pid)
        async with AsyncExitStack() as stack:
            readers = []
            for i in range(MAX_STREAMS):
                # A client of its own per stream: a connection of its own, accepted by
                # whichever worker the kernel wakes.
                client = await stack.enter_async_context(httpx.AsyncClient(
                    base_url=server.url, timeout=30, headers=SERVICE_HEADERS))
                call_id = f"w{i}"
                r = await client.post("/api/chat/sessions", json={"call_id": call_id})
                assert r.status_code == 201, r.text
                stream = await stack.enter_async_context(client.stream(
                    "POST", f"/api/chat/sessions/{call_id}/turns",
                    json={"turn_id": "t1", "text": "你好", "output": "text"}))
                readers.append(stream.aiter_lines())
                opened = len(readers)
                await wait_until(lambda: vendor.serving == opened)  # noqa: B023 (awaited here)
                if i >= 1 and all(clients_held(pid, server.port) for pid in workers):
                    break
            held = {pid: clients_held(pid, server.port) for pid in workers}
            assert all(held.values()), f"one worker accepted every connection: {held}"
            signalled, ended_after = await sigterm_and_read(server.proc, readers)
        assert ended_after < 1.5, ended_after  # at once, on both workers
        code = await asyncio.to_thread(server.proc.wait, GRACE_S + 10)
        exited_after = time.monotonic() - signalled
    finally:
        server.stop()
    assert code == 0, code  # the supervisor: its workers stopped, it exits cleanly
    assert exited_after < GRACE_S + 6, exited_after
    assert not [pid for pid in workers if _alive(pid)]  # none left behind
    assert vendor.closed == len(readers)  # every upstream request was closed
    db = Database(pg_url)
    try:
        records = await stored(db)
    finally:
        await db.dispose()
    codes = [r.code for r in records if r.tier == "chat"]
    assert codes == ["cancelled"] * len(readers), codes
