"""Chat sessions in Redis (issue 26 item 1): the state's round trip, the store on the real
Redis (encrypted at rest, no call id in a key, expiring, saves only from the lease's holder),
and two real `serve` workers on PostgreSQL and Redis: a session made on one is served by the
other, `cancel` and a superseding turn reach the worker running the turn, and a worker killed
mid-turn loses only that turn."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import httpx
import redis.asyncio as aioredis

from callout_server.config.secrets import SecretBox
from callout_server.config.settings import ChatSettings
from callout_server.tiers.chat import calls
from callout_server.tiers.chat.schemas import SessionCreate
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.chat.session import ChatSession
from callout_server.tiers.chat.session_state import dump_settings, dump_turns
from callout_server.tiers.chat.session_store import NOTHING, RedisSessions, Stored
from callout_server.upstream import Upstreams
from tests.fixtures.database import ADMIN_HEADERS, SECRET_KEY, SERVICE_HEADERS, llm_config_body
from tests.support.chat import LONG, read_sse, the_end

PHONE = "13912345678"  # a call named by a phone number: it must not appear in Redis


def _service() -> ChatService:
    from callout_server.llm import LLMClient

    return ChatService(Upstreams(LLMClient()), lambda: None, ChatSettings())  # type: ignore[arg-type, return-value]


async def test_state_round_trip() -> None:
    a = _service()
    a.create_session(SessionCreate(call_id="c1", system_prompt="你是客服", history_turns=3,
                                   tools=[{"type": "function", "name": "lookup"}]))
    s = a.sessions["c1"]
    s.history.add_user_message("t1", "您好", 0)
    s.begin_turn("t1", 0)
    s.history.add_assistant_message("您好，请讲。")
    s.history.add_tool_call("k1", "lookup", {"id": 1})
    s.note_tool_call("k1", "t1", "audio")
    s.history.add_user_message("t2", "我要查订单", 1)
    s.begin_turn("t2", 1)
    s.history.record_interrupted_assistant("好的")
    s.progress.index, s.progress.spoke = 3, True
    settings, turns = dump_settings(s), dump_turns(s)
    assert "你是客服" not in str(turns)  # what never changes is not moved each turn

    b = _service()
    r = b.restore_session("c1", settings, turns)
    assert r.history.to_messages() == s.history.to_messages()
    assert r.history.to_public() == s.history.to_public()
    assert r.history.pending_call_ids == ["k1"] and r.call_turns == {"k1": ("t1", "audio")}
    assert list(r.revisions.items()) == [("t1", 0), ("t2", 1)] and r.turn_id == "t2"
    assert (r.progress.index, r.progress.spoke) == (3, True)
    assert r.tools == s.tools and r.spec == s.spec
    assert dump_settings(r) == settings and dump_turns(r) == turns
    # A pending call whose turn was evicted is kept whole, and pairs with its output later.
    r.history.add_tool_call("k2", "lookup", {"id": 2})
    for n in range(8):
        r.history.add_user_message(f"x{n}", "嗯", 0)
    restored = b.restore_session("c1", settings, dump_turns(r))
    assert restored.history.pending_call_ids == ["k1", "k2"]
    restored.history.append_tool_output("k2", "{}")
    assert restored.history.to_messages()[-1]["role"] == "tool"


async def test_redis_store(redis_url: str, redis_prefix: str) -> None:
    box = SecretBox(SECRET_KEY)
    store = RedisSessions(redis_url, redis_prefix, box, ttl_s=30)
    raw = aioredis.from_url(redis_url)
    try:
        settings = {"spec": {"system_prompt": "你是客服"}}
        turns = {"history": {"items": [{"type": "user", "text": "我的卡号在这里"}]}}
        sid = await store.create(PHONE, settings, turns)
        assert sid and await store.create(PHONE, settings, turns) is None  # session_exists
        keys = [k.decode() async for k in raw.scan_iter(f"{redis_prefix}:*")]
        assert keys and not any(PHONE in k for k in keys)
        (key,) = keys
        for part in ("settings", "turns"):
            data = await raw.hget(key, part)
            assert data.startswith(b"\x01")  # AES-GCM (secrets.Sealer)
            assert not any(w.encode() in data for w in ("卡号", "客服", PHONE))
        assert 0 < await raw.pttl(key) <= 30_000

        # A worker gets what its copy lacks: all of it, then nothing, then newer turns.
        assert await store.load(PHONE, NOTHING) == Stored(1, sid, turns, settings)
        assert await store.load(PHONE, (sid, 1)) == Stored(1, sid)  # nothing decrypted
        # Saves only from the lease's holder; the completed turn's save releases it.
        assert await store.save(PHONE, sid, {"x": 1}, "w1:a", release=True) is None
        assert await store.acquire(PHONE, "w1:a", 5) is None
        assert await store.acquire(PHONE, "w2:b", 5) == "w1:a"
        assert await store.save(PHONE, sid, {"x": 2}, "w1:a", release=True) == 2
        assert await store.holder(PHONE) is None
        assert await store.take(PHONE, "w2:b", 5, (sid, 1)) == Stored(2, sid, {"x": 2})
        assert await store.take(PHONE, "w1:c", 5, (sid, 2)) == "w2:b"  # another's turn
        assert await store.save(PHONE, sid, {"x": 3}, "w1:a", release=True) is None  # not its
        assert await store.save(PHONE, sid, {"x": 3}, "w2:b", release=True) == 3
        assert await store.take(PHONE, "w1:c", 5, (sid, 3)) == Stored(3, sid)
        await store.release(PHONE, "w1:c")
        assert await store.delete(PHONE) is True and await store.load(PHONE, NOTHING) is None
        assert await store.holder(PHONE) is None and await store.delete(PHONE) is False
        assert await store.take(PHONE, "w1:d", 5, NOTHING) is None  # and takes no lease
        assert await store.holder(PHONE) is None

        # The call id made again (a number dialled again later) is another session: a copy
        # of the old one, even at the same version, gets the new one whole, and the old
        # session's holder cannot save over it.
        again = await store.create(PHONE, {"spec": {}}, {"y": 1})
        assert again and again != sid
        assert await store.load(PHONE, (sid, 1)) == Stored(1, again, {"y": 1}, {"spec": {}})
        assert await store.acquire(PHONE, "w1:e", 5) is None
        assert await store.save(PHONE, sid, {"x": 4}, "w1:e", release=False) is None
        assert await store.save(PHONE, again, {"y": 2}, "w1:e", release=True) == 2
    finally:
        await store.aclose()
        await raw.aclose()


async def _sharing(redis_url: str, prefix: str) -> ChatService:
    """A worker's chat service with its sessions in Redis (as `serve` wires it)."""
    chat = _service()
    await calls.share_in_redis(chat, redis_url, prefix, SecretBox(SECRET_KEY), ttl_s=30,
                               lease_s=10)
    return chat


async def _one_turn(chat: ChatService, call_id: str, turn_id: str) -> ChatSession:
    """A turn's effect on the session without a model: claim, a user line and an answer,
    the save that releases the lease."""
    assert chat.shared is not None
    session = await chat.shared.claim(call_id, "superseded")
    session.history.add_user_message(turn_id, f"{turn_id} 您好", 0)
    session.begin_turn(turn_id, 0)
    session.history.add_assistant_message(f"{turn_id} 请讲")
    await chat.shared.save_now(session)
    assert session.lease is None
    return session


async def test_copies_follow_the_stored_session(redis_url: str, redis_prefix: str) -> None:
    a, b = await _sharing(redis_url, redis_prefix), await _sharing(redis_url, redis_prefix)
    try:
        await calls.create(a, SessionCreate(call_id=PHONE, system_prompt="你是客服",
                                            tools=[{"type": "function", "name": "lookup"}]))
        mine = a.sessions[PHONE]
        theirs = await _one_turn(b, PHONE, "t1")  # b builds it from the store, whole
        assert theirs.spec == mine.spec and theirs.tools == mine.tools
        # a's copy is brought up to b's turn in place (only the turns crossed), and back.
        assert await _one_turn(a, PHONE, "t2") is mine
        assert [m["content"] for m in mine.history.to_messages()] == [
            "你是客服", "t1 您好", "t1 请讲", "t2 您好", "t2 请讲"]
        assert await _one_turn(b, PHONE, "t3") is theirs
        assert theirs.history.to_messages() == [*mine.history.to_messages(),
                                                {"role": "user", "content": "t3 您好"},
                                                {"role": "assistant", "content": "t3 请讲"}]
        assert list(theirs.revisions) == ["t1", "t2", "t3"] and mine.version == 3

        # Deleted on b and made again with the same call id, as far as a's stale copy's
        # version: a serves the new session, never its copy of the old one.
        await calls.delete(b, PHONE)
        await calls.create(b, SessionCreate(call_id=PHONE, system_prompt="新的通话"))
        await _one_turn(b, PHONE, "n1")
        await _one_turn(b, PHONE, "n2")
        assert b.sessions[PHONE].version == mine.version == 3
        fresh = await _one_turn(a, PHONE, "n3")
        assert fresh is not mine and mine.closed and fresh.tools == []
        assert [m["content"] for m in fresh.history.to_messages()][:2] == ["新的通话", "n1 您好"]
        assert (await calls.view(b, PHONE)).history[-1]["text"] == "n3 请讲"  # b: loaded
    finally:
        for chat in (a, b):
            assert chat.shared is not None
            await chat.shared.store.delete(PHONE)
            await chat.shared.bus.stop()
            await chat.shared.store.aclose()
            await chat.stop()


# -- two real workers ------------------------------------------------------------------------

async def _turn(c: httpx.AsyncClient, worker: Any, call_id: str, turn_id: str,
                text: str = "您好", calls: list[str] | None = None) -> dict[str, Any]:
    async with c.stream("POST", f"{worker.url}/api/chat/sessions/{call_id}/turns",
                        headers=SERVICE_HEADERS, json={"turn_id": turn_id, "text": text}) as r:
        assert r.status_code == 200, await r.aread()
        events = [e async for e in read_sse(r)]
    if calls is not None:
        calls.extend(e.data["call_id"] for e in events if e.name == "tool_call")
    return the_end(events)


class Streaming:
    """A turn streaming on one worker, read in the background."""

    def __init__(self, c: httpx.AsyncClient, worker: Any, call_id: str, turn_id: str,
                 text: str = "请讲") -> None:
        self.first = asyncio.Event()
        self.ended_at: float | None = None
        self.task = asyncio.create_task(self._read(c, worker, call_id, turn_id, text))

    async def _read(self, c: httpx.AsyncClient, worker: Any, call_id: str, turn_id: str,
                    text: str) -> dict[str, Any] | None:
        try:
            async with c.stream("POST", f"{worker.url}/api/chat/sessions/{call_id}/turns",
                                headers=SERVICE_HEADERS,
                                json={"turn_id": turn_id, "text": text}) as r:
                assert r.status_code == 200
                events = []
                async for e in read_sse(r):
                    events.append(e)
                    if e.name == "sentence":
                        self.first.set()
                self.ended_at = time.perf_counter()
                return the_end(events)
        except httpx.HTTPError:
            self.first.set()
            return None  # the worker died under it


async def _two_workers(start_worker: Any, emulator: Any, c: httpx.AsyncClient,
                       model: str) -> tuple[Any, Any]:
    one, two = await start_worker("one"), await start_worker("two")
    r = await c.post(f"{one.url}/api/admin/llm-configs", headers=ADMIN_HEADERS,
                     json=llm_config_body(tier="chat", model=model, is_active=True,
                                          base_url=emulator.base_url("vllm")))
    assert r.status_code == 201, r.text
    for worker in (one, two):
        deadline = time.monotonic() + 10
        while True:
            items = (await c.get(f"{worker.url}/api/admin/llm-configs",
                                 headers=ADMIN_HEADERS)).json()["items"]
            if any(i["model"] == model and i["is_active"] for i in items):
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    return one, two


async def test_two_workers_share_sessions(start_worker: Any, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with httpx.AsyncClient(timeout=30) as c:
        one, two = await _two_workers(start_worker, emulator, c, model)
        r = await c.post(f"{one.url}/api/chat/sessions", headers=SERVICE_HEADERS,
                         json={"call_id": PHONE, "system_prompt": "你是客服"})
        assert r.status_code == 201, r.text
        r = await c.post(f"{two.url}/api/chat/sessions", headers=SERVICE_HEADERS,
                         json={"call_id": PHONE})
        assert r.status_code == 409 and r.json()["error"]["code"] == "session_exists"

        # Turns alternate workers; each sees the whole history.
        await emulator.script(model, {"content": "您好，我是客服小王。"}, times=1)
        assert (await _turn(c, one, PHONE, "t1", "第一句"))["reason"] == "completed"
        await emulator.script(model, {"content": "好的，请说。"}, times=1)
        assert (await _turn(c, two, PHONE, "t2", "第二句"))["reason"] == "completed"
        sent = (await emulator.requests(model))[-1]["body"]["messages"]
        assert [m["content"] for m in sent] == ["你是客服", "第一句", "您好，我是客服小王。", "第二句"]
        view = (await c.get(f"{one.url}/api/chat/sessions/{PHONE}",
                            headers=SERVICE_HEADERS)).json()
        assert [i["type"] for i in view["history"]] == ["user", "assistant"] * 2

        # `cancel` on the other worker stops the turn streaming on this one.
        await emulator.script(model, LONG, times=1)
        run = Streaming(c, one, PHONE, "t3")
        await asyncio.wait_for(run.first.wait(), 10)
        asked = time.perf_counter()
        r = await c.post(f"{two.url}/api/chat/sessions/{PHONE}/cancel",
                         headers=SERVICE_HEADERS, json={})
        assert r.status_code == 204
        end = await asyncio.wait_for(run.task, 5)
        assert end is not None and end["reason"] == "cancelled"
        assert run.ended_at is not None and run.ended_at - asked < 0.5

        # A new turn on the other worker supersedes the one streaming here: never both.
        await emulator.script(model, LONG, times=1)
        run = Streaming(c, one, PHONE, "t4")
        await asyncio.wait_for(run.first.wait(), 10)
        await emulator.script(model, {"content": "第五轮的回答。"}, times=1)
        assert (await _turn(c, two, PHONE, "t5", "第五句"))["reason"] == "completed"
        end = await asyncio.wait_for(run.task, 5)
        assert end is not None and end["reason"] == "superseded"
        sent = (await emulator.requests(model))[-1]["body"]["messages"]
        assert sent[-1]["content"] == "第五句" and sent[-2]["content"].startswith("第一句话")

        # A worker killed mid-turn loses only that turn: the next continues on the other
        # with the history up to the last completed turn.
        await emulator.script(model, LONG, times=1)
        run = Streaming(c, one, PHONE, "t6", "第六句")
        await asyncio.wait_for(run.first.wait(), 10)
        one.proc.send_signal(signal.SIGKILL)
        one.proc.wait(timeout=10)
        await emulator.script(model, {"content": "第七轮的回答。"}, times=1)
        started = time.perf_counter()
        assert (await _turn(c, two, PHONE, "t7", "第七句"))["reason"] == "completed"
        assert time.perf_counter() - started < 3
        sent = (await emulator.requests(model))[-1]["body"]["messages"]
        contents = [m["content"] for m in sent]
        assert "第六句" not in contents and contents[-3:] == ["第五句", "第五轮的回答。", "第七句"]
        await asyncio.wait_for(run.task, 5)

        r = await c.delete(f"{two.url}/api/chat/sessions/{PHONE}", headers=SERVICE_HEADERS)
        assert r.status_code == 204
        r = await c.get(f"{two.url}/api/chat/sessions/{PHONE}", headers=SERVICE_HEADERS)
        assert r.status_code == 404


CALL = {"id": "call_1", "name": "lookup_order", "arguments": {"order_id": "A1"}}
TOOL = {"type": "function", "name": "lookup_order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


async def test_two_workers_tools_and_races(start_worker: Any, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    async with httpx.AsyncClient(timeout=30) as c:
        one, two = await _two_workers(start_worker, emulator, c, model)
        r = await c.post(f"{one.url}/api/chat/sessions", headers=SERVICE_HEADERS,
                         json={"call_id": "c-tools", "tools": [TOOL]})
        assert r.status_code == 201, r.text

        # A tool call made on one worker is answered on the other (respond: the
        # continuation streams there, with the call and its output in the history).
        await emulator.script(model, {"content": "我查一下。", "tool_calls": [CALL]}, times=1)
        made: list[str] = []
        assert (await _turn(c, one, "c-tools", "t1", "查订单", made))["reason"] == "completed"
        await emulator.script(model, {"content": "您的订单已发货。"}, times=1)
        async with c.stream("POST", f"{two.url}/api/chat/sessions/c-tools/tool-outputs",
                            headers=SERVICE_HEADERS,
                            json={"call_id": made[0], "output": {"status": "shipped"},
                                  "respond": True}) as r:
            assert r.status_code == 200
            assert the_end([e async for e in read_sse(r)])["reason"] == "completed"
        sent = (await emulator.requests(model))[-1]["body"]["messages"]
        assert [m["role"] for m in sent][-2:] == ["assistant", "tool"]
        assert any(m["role"] == "tool" and "shipped" in m["content"] for m in sent)
        r = await c.post(f"{one.url}/api/chat/sessions/c-tools/tool-outputs",
                         headers=SERVICE_HEADERS, json={"call_id": made[0], "output": "x"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "unknown_call_id"

        # A tool output without `respond` while the turn streams on the other worker: that
        # worker takes it; the turn goes on.
        made.clear()
        await emulator.script(model, {"tool_calls": [{**CALL, "id": "call_2"}]}, times=1)
        assert (await _turn(c, one, "c-tools", "t2", "再查", made))["reason"] == "completed"
        await emulator.script(model, LONG, times=1)
        run = Streaming(c, one, "c-tools", "t3")
        await asyncio.wait_for(run.first.wait(), 10)
        r = await c.post(f"{two.url}/api/chat/sessions/c-tools/tool-outputs",
                         headers=SERVICE_HEADERS, json={"call_id": made[0], "output": "ok"})
        assert r.status_code == 204, r.text
        r = await c.post(f"{two.url}/api/chat/sessions/c-tools/cancel",
                         headers=SERVICE_HEADERS, json={"turn_id": "other"})
        assert r.status_code == 204  # not the running turn's: it goes on
        assert not run.task.done()
        await c.post(f"{two.url}/api/chat/sessions/c-tools/cancel", headers=SERVICE_HEADERS,
                     json={"turn_id": "t3"})
        end = await asyncio.wait_for(run.task, 5)
        assert end is not None and end["reason"] == "cancelled"
        view = (await c.get(f"{two.url}/api/chat/sessions/c-tools",
                            headers=SERVICE_HEADERS)).json()
        assert view["pending_call_ids"] == [] and view["in_response"] is False
        assert [i["output"] for i in view["history"] if i["type"] == "function_call_output"
                ][-1] == "ok"

        # Two turns of one call at two workers at once: one streams, never both.
        await emulator.script(model, LONG, times=2)
        first = Streaming(c, one, "c-tools", "t5")
        second = Streaming(c, two, "c-tools", "t6")
        deadline = time.monotonic() + 10
        while not ((first.task.done() and second.first.is_set())
                   or (second.task.done() and first.first.is_set())):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # the other one is still streaming, alone
        assert first.task.done() != second.task.done()
        ended = (first if first.task.done() else second).task.result()
        assert ended is not None and ended["reason"] == "superseded"
        for worker in (one, two):
            await c.post(f"{worker.url}/api/chat/sessions/c-tools/cancel",
                         headers=SERVICE_HEADERS, json={})
        await asyncio.wait_for(asyncio.gather(first.task, second.task), 5)


async def test_erasure_and_redis_away(app_client: httpx.AsyncClient, redis_url: str,
                                      redis_prefix: str, make_settings: Any) -> None:
    from tests.fixtures.app import running_app

    raw = aioredis.from_url(redis_url)
    try:
        r = await app_client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                                  json={"call_id": PHONE})
        assert r.status_code == 201
        assert [k async for k in raw.scan_iter(f"{redis_prefix}:chat:s:*")]
        r = await app_client.delete(f"/api/admin/calls/{PHONE}", headers=ADMIN_HEADERS)
        assert r.status_code == 204, r.text
        assert [k async for k in raw.scan_iter(f"{redis_prefix}:chat:*")] == []
    finally:
        await raw.aclose()

    async with running_app(make_settings(redis__url="redis://127.0.0.1:1/0")) as c:
        r = await c.post("/api/chat/sessions", headers=SERVICE_HEADERS, json={"call_id": "c"})
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "session_store_unavailable"
