"""`serve --workers 2`: a listening socket per worker (SO_REUSEPORT), so connections spread.

With uvicorn's one shared socket, the worker that wakes first accepts what waits, and a
dialer's burst of keep-alive connections lands mostly on one worker. Here, on a real
`serve --workers 2`: each worker listens on a socket of its own and the supervisor holds
none (a socket it kept would take its share of connections and never accept them); a burst
of connections reaches both workers; a worker killed takes its socket out of the group, its
replacement listens on a new one, and no connection is lost to the dead one meanwhile; a
rolling restart (SIGHUP) leaves each new worker with a socket of its own and the old ones'
gone; an address another program holds is refused before any worker starts.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from callout_server.api.workers import reuse_port_available
from tests.fixtures.app import ServerProcess, free_port
from tests.fixtures.calllog import wait_until
from tests.fixtures.database import test_env as worker_env
from tests.fixtures.processes import clients_held, listening, worker_pids

pytestmark = pytest.mark.skipif(not reuse_port_available(), reason="no SO_REUSEPORT here")

BURST = 32


async def _burst(port: int, workers: list[int]) -> dict[int, int]:
    """`BURST` keep-alive connections opened at once, each answered once (so accepted):
    how many of them each of `workers` holds."""
    async def one() -> asyncio.StreamWriter:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nhost: test\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        return writer

    writers = await asyncio.gather(*(one() for _ in range(BURST)))
    ours = {writer.get_extra_info("sockname")[1] for writer in writers}
    try:  # the burst's own connections only (the readiness probe's may linger a moment)
        return {pid: clients_held(pid, port, ours) for pid in workers}
    finally:
        for writer in writers:
            writer.close()


async def _served_on_new_connections(server: ServerProcess, n: int) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=5,
                                 headers={"connection": "close"}) as client:
        for _ in range(n):  # a new connection each
            assert (await client.get("/healthz")).status_code == 200


@pytest.fixture
async def two_workers(pg_url: str, redis_url: str, redis_prefix: str,
                      tmp_path: Path) -> Any:
    server = ServerProcess(worker_env(pg_url, redis_url, redis_prefix),
                           tmp_path / "reuseport.log", "reuseport", args=["--workers", "2"])
    try:
        await server.wait_ready()
        await wait_until(lambda: len(worker_pids(server.proc.pid)) == 2
                         and len(listening(server.port)) == 2, timeout_s=60)
        yield server
    finally:
        server.stop()


async def test_each_worker_listens_on_its_own_socket_and_a_burst_reaches_both(
        two_workers: ServerProcess) -> None:
    server = two_workers
    workers = worker_pids(server.proc.pid)
    holders = listening(server.port)
    assert sorted(holders.values()) == sorted(workers), (holders, workers)  # not the supervisor
    held = await _burst(server.port, workers)
    assert sum(held.values()) == BURST, held
    # The kernel's hash: 32 connections over two sockets put fewer than 4 on one about once
    # in a hundred thousand runs; the shared socket put nearly all on one.
    assert min(held.values()) >= 4, f"the burst went to one worker: {held}"


async def test_a_killed_worker_takes_its_socket_and_its_replacement_listens(
        two_workers: ServerProcess) -> None:
    server = two_workers
    victim, survivor = worker_pids(server.proc.pid)
    os.kill(victim, signal.SIGKILL)
    await wait_until(lambda: victim not in listening(server.port).values(), timeout_s=30)
    # Before its replacement listens, every new connection is the survivor's: the dead
    # worker's socket left the group with it (a copy the supervisor kept would hold it).
    await _served_on_new_connections(server, 20)
    assert server.proc.pid not in listening(server.port).values()
    await wait_until(lambda: len(worker_pids(server.proc.pid)) == 2
                     and len(listening(server.port)) == 2, timeout_s=60)
    replacement = (set(worker_pids(server.proc.pid)) - {survivor}).pop()
    assert set(listening(server.port).values()) == {survivor, replacement}
    assert (await _burst(server.port, [replacement]))[replacement] >= 4


async def test_a_rolling_restart_gives_each_new_worker_its_own_socket(
        two_workers: ServerProcess) -> None:
    server = two_workers
    old = set(worker_pids(server.proc.pid))
    os.kill(server.proc.pid, signal.SIGHUP)  # uvicorn's rolling restart, one worker at a time

    def replaced() -> bool:
        workers = set(worker_pids(server.proc.pid))
        return len(workers) == 2 and not workers & old \
            and set(listening(server.port).values()) == workers

    await wait_until(replaced, timeout_s=60)
    await _served_on_new_connections(server, 10)


async def test_an_address_taken_by_another_program_is_refused_at_start(
        tmp_path: Path, pg_url: str, redis_url: str, redis_prefix: str) -> None:
    port = free_port()
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))  # no SO_REUSEPORT: nobody may join it
    squatter.listen()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "callout_server", "serve", "--workers", "2",
            "--host", "127.0.0.1", "--port", str(port),
            env={**{k: v for k, v in os.environ.items() if not k.startswith("CALLOUT_")},
                 **worker_env(pg_url, redis_url, redis_prefix)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        squatter.close()
    assert proc.returncode == 3, output.decode()  # uvicorn's startup failure
    assert f"cannot listen on 127.0.0.1:{port}".encode() in output, output.decode()
    assert b"Started server process" not in output  # no worker was started
