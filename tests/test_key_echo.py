"""A vendor that writes the configuration's API key into its answer: the key goes no further.

The pure part (`clean_text`, `KeyEcho`: a key split across deltas, held back only while it
could be one; `clean_tool_call`), then each tier on a real socket: the NLU decision, a chat turn's events and
history, a script's stream, answer and draft, and the call log, with the vendor echoing the
key of the configuration it was called with; a chat tool call carrying it in its arguments.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from callout_server.llm.events import ToolCall
from callout_server.llm.key_echo import KeyEcho, clean_text, clean_tool_call, seen_in
from callout_server.llm.masking import MASK
from tests.fixtures.app import running_app
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, reset_tables
from tests.support.nlu import DECIDE, answer, decide_body
from tests.test_scrub import KEY, SECRET, longest_leak


def test_clean_text_replaces_the_key_and_its_long_runs_only() -> None:
    assert clean_text(f"您的密钥是 {KEY}。", KEY) == f"您的密钥是 sk-proj-{MASK}。"
    assert SECRET not in clean_text(f"key={SECRET}", KEY)  # without its vendor prefix
    assert longest_leak(clean_text(f"前半段 {SECRET[:14]} 后半段 {SECRET[-12:]}", KEY)) < 10
    untouched = f"masked as {SECRET[:4]}****{SECRET[-4:]}, 好的"  # shorter runs are no leak
    assert clean_text(untouched, KEY) is untouched
    assert clean_text("好的，我帮您查一下。", KEY) == "好的，我帮您查一下。"
    assert clean_text(f"{KEY}", "") == KEY  # no key configured: nothing to look for


def test_every_run_of_ten_holds_a_seed() -> None:
    for start in range(len(SECRET) - 9):
        for end in range(start + 10, len(SECRET) + 1):
            assert seen_in(f"x{SECRET[start:end]}y", KEY), (start, end)


def _streamed(text: str, pieces: list[int]) -> tuple[str, list[str]]:
    echo, out, i = KeyEcho(KEY), [], 0
    for size in pieces:
        out.append(echo.push(text[i:i + size]))
        i += size
    out.append(echo.push(text[i:]))
    out.append(echo.flush())
    return "".join(out), out


@pytest.mark.parametrize("seed", range(40))
def test_a_key_split_across_deltas_never_gets_through(seed: int) -> None:
    rng = random.Random(seed)
    echoed = rng.choice([KEY, SECRET, SECRET[:15], SECRET[7:30]])
    text = f"好的，您的 key 是 {echoed}，请注意保管。Thanks!"
    joined, _ = _streamed(text, [rng.randint(1, 4) for _ in range(40)])
    assert longest_leak(joined) < 10, joined
    assert MASK in joined and joined.startswith("好的，您的 key 是 ") and joined.endswith("Thanks!")


def test_chinese_text_is_never_held_back() -> None:
    echo = KeyEcho(KEY)
    for delta in ("好的，", "我帮您", "查一下。"):
        assert echo.push(delta) == delta
    assert echo.flush() == ""


def test_a_tool_call_is_cleaned_in_name_arguments_and_raw_text() -> None:
    clean = ToolCall("call_1", "lookup_order", {"order_id": "A1", "n": [1, 2.5, None]},
                     '{"order_id": "A1", "n": [1, 2.5, null]}')
    assert clean_tool_call(clean, KEY) is clean
    leaky = ToolCall("call_2", f"lookup_{KEY}",
                     {"order_id": f"A1 {KEY}", KEY: {"deep": [f"x{KEY}y", 3]}},
                     orjson.dumps({"order_id": f"A1 {KEY}"}).decode())
    cleaned = clean_tool_call(leaky, KEY)
    assert cleaned.call_id == "call_2"
    for text in (cleaned.name, orjson.dumps(cleaned.arguments).decode(), cleaned.raw_arguments):
        assert longest_leak(text) < 10 and MASK in text, text
    [deep] = [v for k, v in cleaned.arguments.items() if k != "order_id"]  # its key masked
    assert deep["deep"][1] == 3
    # Written with \u escapes, the key shows only once the arguments are parsed.
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    hidden = ToolCall("call_3", "lookup_order", {"order_id": KEY}, f'{{"order_id": "{escaped}"}}')
    assert longest_leak(orjson.dumps(clean_tool_call(hidden, KEY).arguments).decode()) < 10


# -- every tier, the vendor echoing the key it was sent --------------------------------------

def _sse(pieces: list[str]) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
              for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _completion(content: str) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


async def echo_vendor(request: web.Request) -> web.StreamResponse:
    """Answers every tier with the bearer key it was sent, the way a leaky proxy would."""
    body = orjson.loads(await request.read())
    key = request.headers["Authorization"].removeprefix("Bearer ")
    if not body.get("stream"):
        nlu = "intent" in str(body["messages"][0]["content"])
        content = answer("agree", 0.9, time=f"明天 {key}") if nlu else f"【开场白】您好。密钥 {key}"
        return web.json_response(_completion(content))
    text = f"好的，我的配置密钥是 {key}。还有什么可以帮您？"
    return web.Response(body=_sse([text[i:i + 3] for i in range(0, len(text), 3)]),
                        content_type="text/event-stream")


@pytest.fixture
async def app(make_settings, pg_url, upstream) -> AsyncIterator[Any]:
    await reset_tables(pg_url)
    upstream.reply = echo_vendor
    tiers = {f"llm.{tier}.{field}": value for tier in ("nlu", "chat", "script")
             for field, value in (("base_url", upstream.base_url), ("api_key", KEY))}
    async with running_app(make_settings(**tiers), streaming=True) as client:
        yield client


def _no_key(what: Any) -> None:
    text = what if isinstance(what, str) else orjson.dumps(what).decode()
    assert longest_leak(text) < 10, text[:2000]


async def test_no_tier_speaks_returns_or_stores_the_key(app) -> None:
    r = await app.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
    assert r.status_code == 200, r.text
    _no_key(r.json())
    assert MASK in r.json()["slots"]["time"]

    r = await app.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                       json={"call_id": "k1", "system_prompt": "你是客服"})
    assert r.status_code == 201, r.text
    for output in ("text", "audio"):
        async with app.stream("POST", "/api/chat/sessions/k1/turns", headers=SERVICE_HEADERS,
                              json={"turn_id": f"t-{output}", "text": "你好",
                                    "output": output}) as s:
            events = [orjson.loads(line[5:]) async for line in s.aiter_lines()
                      if line.startswith("data:")]
        assert events[-1]["reason"] == "completed", events[-1]
        spoken = "".join(e.get("text", "") for e in events)
        _no_key(spoken)
        assert spoken.endswith("还有什么可以帮您？")
        assert MASK in spoken or output == "audio"  # speech drops the asterisks
    view = (await app.get("/api/chat/sessions/k1", headers=SERVICE_HEADERS)).json()
    _no_key(view)

    r = await app.post("/api/scripts/generate", headers=SERVICE_HEADERS,
                       json={"brief": "提醒客户还款"})
    assert r.status_code == 200, r.text
    _no_key(r.json())
    async with app.stream("POST", "/api/scripts/generate", headers=SERVICE_HEADERS,
                          json={"brief": "提醒客户还款", "stream": True}) as s:
        events = [orjson.loads(line[5:]) async for line in s.aiter_lines()
                  if line.startswith("data:")]
    _no_key(events)
    drafts = (await app.get("/api/admin/scripts", headers=ADMIN_HEADERS)).json()["items"]
    assert len(drafts) == 2
    for draft in drafts:
        _no_key((await app.get(f"/api/admin/scripts/{draft['id']}", headers=ADMIN_HEADERS)).json())

    await app.services.recorder.flush()
    records = (await app.get("/api/admin/diagnostics", headers=ADMIN_HEADERS)).json()["items"]
    assert {r["tier"] for r in records} == {"nlu", "chat", "script"}
    _no_key(records)


TOOL = {"type": "function", "name": "lookup_order", "description": "查询订单",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


async def tool_vendor(request: web.Request) -> web.StreamResponse:
    """Streams a tool call whose arguments carry the bearer key it was sent."""
    key = request.headers["Authorization"].removeprefix("Bearer ")
    arguments = orjson.dumps({"order_id": f"A1-{key}"}).decode()
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "我查一下。"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": {"name": "lookup_order", "arguments": arguments[:12]}}]},
            "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "function": {"arguments": arguments[12:]}}]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    return web.Response(body=body, content_type="text/event-stream")


async def test_a_tool_calls_arguments_never_carry_the_key(app, upstream) -> None:
    upstream.reply = tool_vendor
    r = await app.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                       json={"call_id": "k2", "tools": [TOOL]})
    assert r.status_code == 201, r.text
    async with app.stream("POST", "/api/chat/sessions/k2/turns", headers=SERVICE_HEADERS,
                          json={"turn_id": "t1", "text": "订单呢"}) as s:
        events = [orjson.loads(line[5:]) async for line in s.aiter_lines()
                  if line.startswith("data:")]
    [call] = [e for e in events if e.get("name") == "lookup_order"]
    assert call["arguments"]["order_id"].startswith("A1-") and MASK in call["arguments"]["order_id"]
    _no_key(events)
    _no_key((await app.get("/api/chat/sessions/k2", headers=SERVICE_HEADERS)).json())
