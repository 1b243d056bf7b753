"""What the benchmarks share: a fixed-answer upstream, port helpers, a closed-loop load
generator and percentiles. Imported by the bench scripts, which run with `bench/` on
sys.path (`.venv/bin/python bench/<name>.py`)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable


def serve_fixed(port: int, body: bytes) -> None:
    """The upstream process: every POST gets `body`; no work beyond reading the request."""
    from aiohttp import web

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


async def run_batch(call: Callable[[], Awaitable[None]], total: int, inflight: int
                    ) -> tuple[float, list[float]]:
    """`total` calls with `inflight` of them always outstanding: (seconds, latencies in ms)."""
    latencies: list[float] = []
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            t = time.perf_counter()
            await call()
            latencies.append((time.perf_counter() - t) * 1000.0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(inflight)))
    return time.perf_counter() - start, latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
