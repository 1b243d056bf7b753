"""aiohttp application: vendor routes, the ``/_emulator`` control API, and the entry point.

Per request the work is: parse JSON, one script lookup, one pure plan, one render. Nothing
else runs on the hot path (no logging, no validation beyond what the persona's vendor does),
because benchmarks measure the hub's overhead against this upstream.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from aiohttp import web

from callout_server.emulator import chat_completions, responses
from callout_server.emulator.errors import VendorError, default_message
from callout_server.emulator.pace import DEFAULT as DEFAULT_PACE
from callout_server.emulator.pace import ChatPace, add_pace_arguments
from callout_server.emulator.personas import DEFAULT_PERSONA, PERSONAS, Persona
from callout_server.emulator.plan import Plan, make_plan
from callout_server.emulator.rules import Api
from callout_server.emulator.scripts import DEFAULT_REPLY, Recorder, Reply, ScriptBook
from callout_server.emulator.streaming import (
    drop_connection,
    mark_disconnected,
    non_stream_delay,
    pump,
)

BOOK = web.AppKey("book", ScriptBook)
RECORDER = web.AppKey("recorder", Recorder)
PACE = web.AppKey("pace", ChatPace)

Renderer = Callable[[Persona, Plan, dict[str, Any], bool], dict[str, Any]]
Streamer = Callable[[Persona, Plan, dict[str, Any], bool], Iterator[bytes]]
_API: dict[Api, tuple[Renderer, Streamer, bytes, bytes]] = {
    "chat": (chat_completions.render, chat_completions.stream, chat_completions.MALFORMED,
             chat_completions.MALFORMED_BODY),
    "responses": (responses.render, responses.stream, responses.MALFORMED,
                  responses.MALFORMED_BODY),
}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, headers=headers,
                        content_type="application/json")


def _error(persona: Persona, err: VendorError) -> web.Response:
    return _json(persona.error_style(err.status, err.message, err.param, err.code), err.status)


async def _generate(request: web.Request, api: Api) -> web.StreamResponse:
    persona = PERSONAS.get(request.match_info.get("persona", DEFAULT_PERSONA))
    if persona is None:
        return _json({"error": {"message": "unknown emulator persona"}}, 404)
    if api == "responses" and not persona.supports_responses:
        return _error(persona, VendorError(404, f"{request.path} not found"))
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return _error(persona, VendorError(400, "We could not parse the JSON body of your "
                                                "request."))
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return _error(persona, VendorError(400, "you must provide a model parameter",
                                           param="model", code="missing_required_parameter"))
    model: str = body["model"]
    stream = body.get("stream") is True
    replica = request.match_info.get("replica")
    record = request.app[RECORDER].start(
        persona=persona.name, api=api, path=request.path, model=model, body=body,
        headers=request.headers, stream=stream, replica=replica,
    )
    script = request.app[BOOK].take(model, persona.name, replica)
    reply = script.reply if script is not None else DEFAULT_REPLY
    record["script_id"] = script.id if script is not None else None
    try:
        resp = await _answer(request, persona, api, body, reply, stream, record)
        record["status"] = resp.status
        return resp
    except asyncio.CancelledError:
        mark_disconnected(record)  # handler cancellation: the client closed the connection
        raise
    finally:
        record["finished_at"] = time.time()


async def _answer(
    request: web.Request, persona: Persona, api: Api, body: dict[str, Any], reply: Reply,
    stream: bool, record: dict[str, Any],
) -> web.StreamResponse:
    render, streamer, malformed, malformed_body = _API[api]
    if reply.status is not None:
        await non_stream_delay(reply, 0)
        payload = reply.error_body if reply.error_body is not None else persona.error_style(
            reply.status, default_message(reply.status), None, None)
        return _json(payload, reply.status, reply.headers)
    try:
        plan = make_plan(persona, api, body, reply, stream)
    except VendorError as err:
        return _error(persona, err)
    if stream:
        if plan.stock_chat and not plan.reasoning_tokens:  # a real model's pace (pace.py)
            reply = request.app[PACE].applied_to(reply)
        if reply.hang is True:
            await asyncio.Event().wait()  # accepted, never answers (not even headers)
        return await pump(request, reply, streamer(persona, plan, body, reply.no_choices),
                          record, malformed)
    if reply.hang is not False:
        await asyncio.Event().wait()
    await non_stream_delay(reply, len(plan.content_pieces) + plan.reasoning_tokens)
    if reply.disconnect_after is not None:
        drop_connection(request, record)
        return web.Response(status=200)
    if reply.malformed_after is not None:
        return web.Response(body=malformed_body, content_type="application/json")
    return _json(render(persona, plan, body, reply.no_choices), headers=reply.headers)


async def chat(request: web.Request) -> web.StreamResponse:
    return await _generate(request, "chat")


async def responses_api(request: web.Request) -> web.StreamResponse:
    return await _generate(request, "responses")


# Served by every persona: the shipped config.toml's models.
SERVED_MODELS = ("qwen3.5-2b", "qwen3.6-27b-fp8")


async def models(request: web.Request) -> web.Response:
    """The OpenAI model list: the shipped models and every model a script was added for."""
    names = {*SERVED_MODELS, *(s.model for s in request.app[BOOK].all() if s.model)}
    return _json({"object": "list", "data": [
        {"id": name, "object": "model", "created": 0, "owned_by": "callout-emulator"}
        for name in sorted(names)]})


# --- control API --------------------------------------------------------------------------


async def health(request: web.Request) -> web.Response:
    return _json({"status": "ok", "personas": sorted(PERSONAS)})


async def add_script(request: web.Request) -> web.Response:
    try:
        spec = orjson.loads(await request.read())
        script = request.app[BOOK].add(spec)
    except (orjson.JSONDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
        return _json({"error": str(exc)}, 400)
    return _json({"id": script.id}, 201)


async def list_scripts(request: web.Request) -> web.Response:
    return _json({"scripts": [s.to_json() for s in request.app[BOOK].all()]})


async def clear_scripts(request: web.Request) -> web.Response:
    request.app[BOOK].clear(request.query.get("model"))
    return _json({"ok": True})


async def list_requests(request: web.Request) -> web.Response:
    return _json({"requests": request.app[RECORDER].get(request.query.get("model"))})


async def clear_requests(request: web.Request) -> web.Response:
    request.app[RECORDER].clear(request.query.get("model"))
    return _json({"ok": True})


def build_app(*, record: bool = True, pace: ChatPace = DEFAULT_PACE) -> web.Application:
    """The emulator as an aiohttp app. Run it with ``handler_cancellation=True`` so that a
    client disconnect during a stall is noticed and recorded (``main`` does). `pace`: how
    the stock chat reply streams (``pace.py``)."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[BOOK] = ScriptBook()
    app[RECORDER] = Recorder(enabled=record)
    app[PACE] = pace
    app.router.add_get("/_emulator/health", health)
    app.router.add_post("/_emulator/scripts", add_script)
    app.router.add_get("/_emulator/scripts", list_scripts)
    app.router.add_delete("/_emulator/scripts", clear_scripts)
    app.router.add_get("/_emulator/requests", list_requests)
    app.router.add_delete("/_emulator/requests", clear_requests)
    # `/r/<replica>/...`: one emulator plays several replicas of one model (a pool); scripts
    # matched by `replica` make one of them slow or failing, as a path-routing proxy would.
    for prefix in ("", "/{persona}", "/r/{replica}", "/r/{replica}/{persona}"):
        app.router.add_post(f"{prefix}/v1/chat/completions", chat)
        app.router.add_post(f"{prefix}/v1/responses", responses_api)
        app.router.add_get(f"{prefix}/v1/models", models)
    return app


async def serve(host: str, port: int, record: bool = True,
                pace: ChatPace = DEFAULT_PACE) -> None:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    runner = web.AppRunner(build_app(record=record, pace=pace), handler_cancellation=True,
                           access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock, shutdown_timeout=0.5, backlog=1024)
    await site.start()
    bound = sock.getsockname()[1]
    # The fixture reads this line to learn the port (``--port 0`` picks a free one).
    print(f"callout-emulator listening on http://{host}:{bound}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="callout-server emulator",
        description="OpenAI-compatible vendor emulator (see callout_server.emulator docs).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900, help="0 = any free port")
    parser.add_argument("--no-record", action="store_true",
                        help="do not keep request bodies (long benchmarks)")
    add_pace_arguments(parser)
    args = parser.parse_args(argv)
    pace = ChatPace(args.chat_ttft_ms, args.chat_token_ms)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        import uvloop  # optional: a faster loop makes a faster upstream for benchmarks
    except ImportError:
        uvloop = None
    try:
        if uvloop is not None:
            uvloop.run(serve(args.host, args.port, not args.no_record, pace))
        else:
            asyncio.run(serve(args.host, args.port, not args.no_record, pace))
    except KeyboardInterrupt:
        pass
