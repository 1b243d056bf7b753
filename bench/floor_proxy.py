"""The Python floor: the least a Python gateway can do per request, for `bench_peers.py --floor`.

    .venv/bin/python bench/floor_proxy.py PORT UPSTREAM_URL
    .venv/bin/python bench/floor_proxy.py --app PORT      # settings from CALLOUT_* as serve
    .venv/bin/python bench/floor_proxy.py --direct PORT   # the same, the decision without the web layer

A keep-alive HTTP/1.1 server on uvloop (an `asyncio.Protocol` with httptools' request parser,
what uvicorn uses) that forwards each POST body unchanged to `UPSTREAM_URL/chat/completions`
on our own client pool (`llm/lean_http.LeanPool`, what `/api/nlu/decide` posts on) and answers
the upstream's body. No framework, no routing, no validation, no prompt, no parsing, no
record, no metrics, no auth: what is left is the two HTTP exchanges and the event loop, the
part of a decision no Python code can avoid. TensorZero beside it is the same job in Rust;
ours beside it is that job plus everything a decision does.

`--app`: the same server protocol running callout-server's whole ASGI app (`create_app()`,
its lifespan, every middleware and route) with the least an ASGI server can do per request:
a scope, one `receive` message, the response written once. Beside `serve` (uvicorn and our
connection guards), what the HTTP server itself costs a decision above that minimum: for
measuring only (no limits, no timers, no keep-alive expiry, no shutdown drain, no errors
handled), never to serve with.

`--direct`: as `--app`, but `POST /api/nlu/decide` skips the ASGI app: the body validated
into a `DecideRequest`, `NluService.decide()` (prompt, the call, parsing, extraction,
validation, the call-log record, so the writer's work too), the `Decision` encoded. No edge,
no authentication, no service key, no routing: beside `--app`, what the web layer costs.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httptools
import uvloop

from callout_server.llm.lean_http import LeanPool, Slots

HEAD = b"HTTP/1.1 %d OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"


class Proxy(asyncio.Protocol):
    def __init__(self, pool: LeanPool, url: str) -> None:
        self.pool, self.url = pool, url
        self.parser = httptools.HttpRequestParser(self)
        self.body: list[bytes] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        body, self.body = b"".join(self.body), []
        asyncio.get_running_loop().create_task(self.forward(body))

    async def forward(self, body: bytes) -> None:
        status, answer, _ = await self.pool.post(
            self.url, body, {"content-type": "application/json",
                             "authorization": "Bearer sk-floor"},
            limit=1 << 20, error_limit=4096, connect_timeout_s=5.0)
        answer = answer or b""
        assert self.transport is not None
        self.transport.write(HEAD % (status, len(answer)) + answer)


class AppServer(asyncio.Protocol):
    """One request at a time per connection (keep-alive, no pipelining: what the loadgen does)."""

    def __init__(self, app: object, state: dict, direct: Any = None) -> None:
        self.app, self.state, self.direct = app, state, direct
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.client = transport.get_extra_info("peername")[:2]
        self.server = transport.get_extra_info("sockname")[:2]

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        path, _, query = self.url.partition(b"?")
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"},
                 "http_version": "1.1", "method": self.parser.get_method().decode(),
                 "scheme": "http", "path": path.decode(), "raw_path": path, "root_path": "",
                 "query_string": query, "headers": self.headers, "client": self.client,
                 "server": self.server, "state": dict(self.state)}
        body, self.body, self.url, self.headers = b"".join(self.body), [], b"", []
        asyncio.get_running_loop().create_task(self.run(scope, body))

    async def run(self, scope: dict, body: bytes) -> None:
        head: list[bytes] = []
        parts: list[bytes] = []

        async def receive() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict) -> None:
            if message["type"] == "http.response.start":
                head.append(b"HTTP/1.1 %d X\r\n" % message["status"])
                head.extend(b"%s: %s\r\n" % (k, v) for k, v in message.get("headers", ())
                            if k.lower() != b"content-length")
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if not message.get("more_body"):
                    data = b"".join(parts)
                    assert self.transport is not None
                    self.transport.write(b"".join(head) + b"content-length: %d\r\n\r\n"
                                         % len(data) + data)

        if self.direct is not None and scope["path"] == "/api/nlu/decide":
            await self.decide_direct(body, send)
            return
        await self.app(scope, receive, send)  # type: ignore[operator]

    async def decide_direct(self, body: bytes, send: Callable[[dict], Awaitable[None]]) -> None:
        """The decision without the web layer: decode, `NluService.decide`, encode. No edge,
        no authentication, no service key, no route: what the web layer costs, by difference."""
        from callout_server.tiers.nlu.schemas import DecideRequest

        decision = await self.direct.decide(DecideRequest.model_validate_json(body),
                                            received_at=time.perf_counter())
        content = decision.__pydantic_serializer__.to_json(decision)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": content})


async def serve_app(port: int, direct: bool) -> None:
    from callout_server.app import create_app
    from callout_server.tiers.nlu.service import NluService

    app = create_app()
    loop = asyncio.get_running_loop()
    async with app.router.lifespan_context(app) as state:
        nlu = app.state.components[NluService] if direct else None
        server = await loop.create_server(lambda: AppServer(app, state or {}, nlu),
                                          "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()


async def main(port: int, upstream: str) -> None:
    pool = LeanPool(Slots(1024), ssl_context=None, guarded=False, keepalive_s=60.0)
    url = upstream.rstrip("/") + "/chat/completions"
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Proxy(pool, url), "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] in ("--app", "--direct"):
        uvloop.run(serve_app(int(sys.argv[2]), direct=sys.argv[1] == "--direct"))
    else:
        uvloop.run(main(int(sys.argv[1]), sys.argv[2]))
