"""The chat routes over HTTP (a streaming ASGI transport, so events arrive as they are sent):
status codes and bodies per the contract, barge-in from a concurrent request, client hang-up."""

from __future__ import annotations

import asyncio
import time

from tests.support.chat import (
    LONG,
    http_client,
    make_service,
    read_sse,
    sentences,
    the_end,
    wait_disconnect,
)

TOOL = {"type": "function", "name": "lookup_order", "description": "查询订单",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


async def test_session_routes(emulator):
    h = await make_service(emulator, emulator.unique_model("chatm"))
    try:
        async with http_client(h.service) as c:
            r = await c.post("/api/chat/sessions", json={
                "call_id": "c-1", "system_prompt": "你是客服", "tools": [TOOL],
                "history_turns": 6, "compact_history": False, "timeout_apology": "抱歉。",
                "overrides": {"max_tokens": 100}})
            assert r.status_code == 201, r.text
            body = r.json()
            assert body["call_id"] == "c-1" and body["tools"] == ["lookup_order"]
            assert body["history"] == [] and body["in_response"] is False

            r = await c.post("/api/chat/sessions", json={"call_id": "c-1"})
            assert r.status_code == 409 and r.json()["error"]["code"] == "session_exists"

            r = await c.get("/api/chat/sessions/c-1")
            assert r.status_code == 200 and r.json()["history_turns"] == 6

            r = await c.delete("/api/chat/sessions/c-1")
            assert r.status_code == 204
            r = await c.get("/api/chat/sessions/c-1")
            assert r.status_code == 404 and r.json()["error"]["code"] == "session_not_found"
            r = await c.post("/api/chat/sessions/c-1/cancel", json={})
            assert r.status_code == 404
    finally:
        await h.close()


async def test_validation_errors_are_422(emulator):
    h = await make_service(emulator, emulator.unique_model("chatm"))
    try:
        async with http_client(h.service) as c:
            bad = [
                {"call_id": "c", "tools": [{"type": "function", "name": "has space"}]},
                {"call_id": "c", "tools": [{"type": "retrieval", "name": "x"}]},
                {"call_id": "c", "tools": [{"type": "function", "name": "x",
                                            "parameters": {"type": "string"}}]},
                {"call_id": "c", "tools": [TOOL, TOOL]},
                {"call_id": "c", "history_turns": 0},
                {"call_id": "c", "overrides": {"model": "other"}},
                {"call_id": "c", "overrides": {"extra_params": {"stream": False}}},
                {"system_prompt": "no call id"},
            ]
            for payload in bad:
                r = await c.post("/api/chat/sessions", json=payload)
                assert r.status_code == 422, payload
                assert r.json()["error"]["code"] == "validation_error"
            assert (await c.post("/api/chat/sessions", json={"call_id": "c"})).status_code == 201
            r = await c.post("/api/chat/sessions/c/turns", json={"turn_id": "t1", "text": ""})
            assert r.status_code == 422
            r = await c.post("/api/chat/sessions/c/turns",
                             json={"turn_id": "t1", "text": "x", "output": "video"})
            assert r.status_code == 422
            r = await c.post("/api/chat/sessions/c/tool-outputs", json={"output": "x"})
            assert r.status_code == 422
    finally:
        await h.close()


async def test_turn_stream_tool_call_and_tool_output_routes(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"chunks": ["好的，", "我查", "一下。"],
                                  "tool_calls": [{"name": "lookup_order",
                                                  "arguments": {"order_id": "A1"}}]}, times=1)
    await emulator.script(model, {"content": "已经发货了。"}, times=1)
    h = await make_service(emulator, model)
    try:
        async with http_client(h.service) as c:
            await c.post("/api/chat/sessions", json={"call_id": "c", "tools": [TOOL]})
            async with c.stream("POST", "/api/chat/sessions/c/turns",
                                json={"turn_id": "t1", "text": "订单呢"}) as r:
                assert r.status_code == 200
                assert r.headers["content-type"].startswith("text/event-stream")
                assert r.headers["cache-control"] == "no-cache"
                events = [e async for e in read_sse(r)]
            assert [e.name for e in events] == ["sentence", "tool_call", "usage", "end"]
            call_id = events[1].data["call_id"]

            r = await c.post("/api/chat/sessions/c/tool-outputs",
                             json={"call_id": "call_unknown", "output": "x"})
            assert r.status_code == 409 and r.json()["error"]["code"] == "unknown_call_id"

            async with c.stream("POST", "/api/chat/sessions/c/tool-outputs",
                                json={"call_id": call_id, "output": {"status": "shipped"},
                                      "respond": True}) as r:
                assert r.status_code == 200
                more = [e async for e in read_sse(r)]
            assert sentences(more) == ["已经发货了。"] and the_end(more)["reason"] == "completed"

            history = (await c.get("/api/chat/sessions/c")).json()["history"]
            assert [i["type"] for i in history] == [
                "user", "assistant", "function_call", "function_call_output", "assistant"]
            assert history[3]["output"] == '{"status": "shipped"}'
    finally:
        await h.close()


async def test_tool_output_without_respond_is_204(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, {"tool_calls": [{"name": "lookup_order", "arguments": {}}]},
                          times=1)
    h = await make_service(emulator, model)
    try:
        async with http_client(h.service) as c:
            await c.post("/api/chat/sessions", json={"call_id": "c", "tools": [TOOL]})
            async with c.stream("POST", "/api/chat/sessions/c/turns",
                                json={"turn_id": "t1", "text": "查", "output": "text"}) as r:
                events = [e async for e in read_sse(r)]
            call_id = next(e.data["call_id"] for e in events if e.name == "tool_call")
            r = await c.post("/api/chat/sessions/c/tool-outputs",
                             json={"call_id": call_id, "output": "done", "respond": False})
            assert r.status_code == 204 and r.content == b""
    finally:
        await h.close()


async def test_cancel_route_ends_stream_within_100ms(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    h = await make_service(emulator, model)
    try:
        async with http_client(h.service) as c:
            await c.post("/api/chat/sessions", json={"call_id": "c"})
            events, cancelled_at = [], 0.0
            async with c.stream("POST", "/api/chat/sessions/c/turns",
                                json={"turn_id": "t1", "text": "说吧"}) as r:
                async for ev in read_sse(r):
                    events.append(ev)
                    if ev.name == "sentence" and not cancelled_at:
                        cancelled_at = time.perf_counter()
                        rc = await c.post("/api/chat/sessions/c/cancel", json={"turn_id": "t1"})
                        assert rc.status_code == 204
            assert the_end(events)["reason"] == "cancelled"
            assert events[-1].at - cancelled_at < 0.1
            await wait_disconnect(emulator, model)
            r = await c.post("/api/chat/sessions/c/cancel")  # no body, nothing in flight
            assert r.status_code == 204
            view = (await c.get("/api/chat/sessions/c")).json()
            assert view["in_response"] is False
            assert view["history"][-1] == {"type": "assistant", "text": "第一句话。",
                                           "interrupted": True}
    finally:
        await h.close()


async def test_new_turn_over_http_supersedes_and_stale_revision_is_409(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    await emulator.script(model, {"content": "好的。"}, times=1)
    h = await make_service(emulator, model)
    try:
        async with http_client(h.service) as c:
            await c.post("/api/chat/sessions", json={"call_id": "c"})
            first: list = []
            async with c.stream("POST", "/api/chat/sessions/c/turns",
                                json={"turn_id": "t1", "revision": 0, "text": "明天"}) as r:
                async for ev in read_sse(r):
                    first.append(ev)
                    if ev.name == "sentence" and len(first) == 1:
                        second = asyncio.create_task(_all(c, {"turn_id": "t1", "revision": 2,
                                                              "text": "明天下午"}))
            assert the_end(first)["reason"] == "superseded"
            assert the_end(await second)["reason"] == "completed"
            r = await c.post("/api/chat/sessions/c/turns",
                             json={"turn_id": "t1", "revision": 1, "text": "明"})
            assert r.status_code == 409 and r.json()["error"]["code"] == "stale_revision"
            users = [i for i in (await c.get("/api/chat/sessions/c")).json()["history"]
                     if i["type"] == "user"]
            assert [(u["text"], u["revision"]) for u in users] == [("明天下午", 2)]
    finally:
        await h.close()


async def _all(c, payload):
    async with c.stream("POST", "/api/chat/sessions/c/turns", json=payload) as r:
        return [e async for e in read_sse(r)]


async def test_client_hang_up_closes_upstream_and_unlocks(emulator):
    model = emulator.unique_model("chatm")
    await emulator.script(model, LONG, times=1)
    h = await make_service(emulator, model)
    try:
        async with http_client(h.service) as c:
            await c.post("/api/chat/sessions", json={"call_id": "c"})
            async with c.stream("POST", "/api/chat/sessions/c/turns",
                                json={"turn_id": "t1", "text": "说"}) as r:
                async for ev in read_sse(r):
                    if ev.name == "sentence":
                        break  # leaving the block closes the response: the dialer hung up
            await wait_disconnect(emulator, model)
            session = h.service.get("c")
            assert not session.in_response
            assert session.history.to_public()[-1]["interrupted"] is True
    finally:
        await h.close()
