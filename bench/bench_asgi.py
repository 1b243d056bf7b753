"""CPU per decision of the whole app without sockets: what the app costs, alone and steadily.

    .venv/bin/python bench/bench_asgi.py [--requests 3000] [--rounds 7]
    cp bench/bench_asgi.py OTHER/bench/ && (cd OTHER && $PWD/.venv/bin/python bench/bench_asgi.py)
                          # another version (a worktree of an older commit): bench_nlu.py puts
                          # its own checkout first on sys.path

`create_app()` with its lifespan (call log on PostgreSQL, a fresh database), driven as the ASGI
server would drive it: one `POST /api/nlu/decide` after the other, with the service token, in
this process. The model call's HTTP round trip is replaced by the fixed answer (`LLMClient._post`
returns it), so everything else runs: the edge, routing, decoding and validation, the prompt,
dialect shaping, the pool, parsing, extraction, validation, encoding, metrics, the call-log
record, and the background writer's COPY (its CPU is charged to the decisions that caused it:
each round flushes the recorder before it stops the clock). No uvicorn, no aiohttp: the
difference between two versions of the app, on a machine too busy for bench_peers.py to tell.
Prints the CPU µs per decision of each round, then min and median.

    .venv/bin/python bench/bench_asgi.py --routed-too

also runs, round after round in the same process, the app with `LeanDispatch` taken out (every
request found by FastAPI's router), and prints both and their per-round ratio.

    .venv/bin/python bench/bench_asgi.py --direct-too

also runs, round after round, the decision without the web layer (the body validated, the
service's `decide()`, the answer encoded: no edge, identity, key, routing or FastAPI), and
prints both and their ratio: what the web layer costs a decision, in-process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import orjson
from bench_nlu import DECIDE, REPLY, SERVICE_TOKEN, create_pg_database, drop_pg_database

ROOT = Path(__file__).resolve().parents[1]


async def run(args: argparse.Namespace) -> None:
    import callout_server
    from callout_server.app import create_app
    from callout_server.config.settings import load_settings
    from callout_server.llm import LLMClient
    from callout_server.tiers.nlu.schemas import DecideRequest
    from callout_server.tiers.nlu.service import NluService

    async def fixed(self: object, *args: object) -> tuple[int, bytes, str | None]:
        return 200, REPLY, None  # whatever `_post`'s arguments (they grew a lane since)

    LLMClient._post = fixed  # type: ignore[method-assign]
    database_url = await create_pg_database()
    env = {
        "CALLOUT_NLU_BASE_URL": "http://127.0.0.1:9/v1", "CALLOUT_SERVICE_TOKEN": SERVICE_TOKEN,
        "CALLOUT_ADMIN_TOKEN": "bench-admin-token", "CALLOUT_ADMIN_USER": "admin",
        "CALLOUT_ADMIN_PASSWORD": "bench-admin-pass", "CALLOUT_DATABASE_URL": database_url,
        "CALLOUT_SECRET_KEY": "RzO0eb-wXMZ-QO0fbc3bsjBAnfDcRpmR8qhUoMrT4QA=",
        "CALLOUT_LOG_LEVEL": "warning",
    }
    try:
        app = create_app(load_settings(ROOT / "config.toml", env=env))
        body = orjson.dumps(DECIDE)
        headers = [(b"host", b"bench"), (b"content-type", b"application/json"),
                   (b"authorization", f"Bearer {SERVICE_TOKEN}".encode()),
                   (b"content-length", str(len(body)).encode())]
        status: list[int] = []

        async def receive() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        def scope() -> dict:
            return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                    "method": "POST", "scheme": "http", "path": "/api/nlu/decide",
                    "raw_path": b"/api/nlu/decide", "root_path": "", "query_string": b"",
                    "headers": headers, "client": ("127.0.0.1", 50000),
                    "server": ("127.0.0.1", 8080), "state": {}}

        async with app.router.lifespan_context(app):
            from callout_server.app import tune_gc

            tune_gc()  # as the lifespan does under a server (lifespan_context skips nothing)
            for _ in range(500):
                await app(scope(), receive, send)
            await app.state.services.recorder.flush()
            assert status and set(status) == {200}, set(status)
            dispatch = getattr(app.state, "lean_dispatch", None)
            variants = {"": dispatch}
            if args.routed_too:
                variants = {"dispatched": dispatch, "routed": dispatch.app}
            if args.direct_too:
                variants = {"app": dispatch, "direct": None}
            nlu = app.state.components[NluService]

            async def direct() -> None:  # the decision without the web layer
                decision = await nlu.decide(DecideRequest.model_validate_json(body),
                                            received_at=time.perf_counter())
                decision.__pydantic_serializer__.to_json(decision)
                status.append(200)

            per: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.rounds):
                for name, inner in variants.items():
                    if inner is not None:
                        app.router.middleware_stack = inner
                    status.clear()
                    t0 = time.process_time()
                    if name == "direct":
                        for _ in range(args.requests):
                            await direct()
                    else:
                        for _ in range(args.requests):
                            await app(scope(), receive, send)
                    await app.state.services.recorder.flush()
                    per[name].append((time.process_time() - t0) / args.requests * 1e6)
                    assert set(status) == {200}
        for name, times in per.items():
            print(f"{Path(callout_server.__file__).parents[1]}{' ' + name if name else ''}: "
                  "CPU µs per decision, rounds: " + " ".join(f"{x:.0f}" for x in times)
                  + f"; min {min(times):.0f}, median {statistics.median(times):.0f} "
                    f"(load average {os.getloadavg()[0]:.1f})")
        for a, b in (("dispatched", "routed"), ("direct", "app")):
            if a in per and b in per:
                ratios = [x / y for x, y in zip(per[a], per[b], strict=True)]
                print(f"{a} / {b} per round: median {statistics.median(ratios):.3f} "
                      f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    finally:
        await drop_pg_database(database_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--routed-too", action="store_true",
                        help="alternate rounds with LeanDispatch taken out")
    parser.add_argument("--direct-too", action="store_true",
                        help="alternate rounds with the decision called without the web layer")
    import uvloop

    sys.exit(uvloop.run(run(parser.parse_args())))
