"""Chat sessions in Redis, what a long-lived worker must not accumulate (audit 2): a turn
lock per failed claim, a Redis connection per bus reconnect; and a malformed bus message
must not drop the subscription (a yield request sent meanwhile would be lost, its asker
would take the lease over and the running turn would be lost). All on the real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from callout_server.config.secrets import SecretBox
from callout_server.config.settings import ChatSettings
from callout_server.tiers.chat import calls
from callout_server.tiers.chat.errors import SessionNotFound
from callout_server.tiers.chat.schemas import SessionCreate
from callout_server.tiers.chat.service import ChatService
from callout_server.tiers.chat.session_bus import ChatBus, Message
from callout_server.tiers.chat.session_store import RedisSessions
from callout_server.tiers.chat.shared import YIELD_TIMEOUT_S, SharedSessions, worker_id
from tests.fixtures.database import SECRET_KEY
from tests.fixtures.tcp_proxy import TcpProxy

PHONE = "13912345678"
BUS_LOG = "callout_server.tiers.chat.session_bus"


def _service() -> ChatService:
    from callout_server.llm import LLMClient
    from callout_server.upstream import Upstreams

    return ChatService(Upstreams(LLMClient()), lambda: None, ChatSettings())  # type: ignore[arg-type, return-value]


async def _until(condition: Callable[[], bool] | Callable[[], Awaitable[bool]],
                 timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        met = condition()
        if not isinstance(met, bool):
            met = await met
        if met:
            return
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def _settle() -> None:
    """Let every ready task run until it blocks (no time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


class GatedStore(RedisSessions):
    """The real store; each save waits at a gate (one `gate.release()` lets one through),
    and how many saves were inside at once is kept."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.gate = asyncio.Semaphore(0)
        self.inside = 0
        self.most = 0

    async def save(self, call_id: str, sid: str, turns: dict[str, Any], token: str, *,
                   release: bool) -> int | None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        try:
            await self.gate.acquire()
            return await super().save(call_id, sid, turns, token, release=release)
        finally:
            self.inside -= 1


async def _worker(redis_url: str, prefix: str, store: RedisSessions | None = None
                  ) -> tuple[ChatService, SharedSessions]:
    chat = _service()
    bus = ChatBus(redis_url, prefix, worker_id())
    chat.share(store or RedisSessions(redis_url, prefix, SecretBox(SECRET_KEY), 30), bus,
               lease_s=10)
    assert chat.shared is not None
    await bus.start(chat.shared.handle)
    return chat, chat.shared


async def _stop(chat: ChatService) -> None:
    assert chat.shared is not None
    with contextlib.suppress(RedisError):  # a store cut off on purpose
        await chat.shared.store.delete(PHONE)
    await chat.shared.bus.stop()
    await chat.shared.store.aclose()
    await chat.stop()


def _proxy_for(redis_url: str) -> TcpProxy:
    parts = urlsplit(redis_url)
    return TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379)


# -- 1. turn locks ---------------------------------------------------------------------------

@pytest.mark.timeout(60)
async def test_failed_claims_leave_no_locks(redis_url: str, redis_prefix: str) -> None:
    proxy = _proxy_for(redis_url)
    await proxy.start()
    a, shared_a = await _worker(redis_url, redis_prefix)
    # b's store reaches Redis through a proxy that we cut: take() raises there.
    b, shared_b = await _worker(redis_url, redis_prefix, RedisSessions(
        f"redis://127.0.0.1:{proxy.port}/0", redis_prefix, SecretBox(SECRET_KEY), 30))
    try:
        for n in range(500):  # unknown calls: expired in Redis, or a bad id (404)
            with pytest.raises(SessionNotFound):
                await shared_a.claim(f"no-such-call-{n}", "superseded")
        assert shared_a._locks == {}

        await calls.create(a, SessionCreate(call_id=PHONE, system_prompt="你是客服"))
        proxy.cut(refuse=True)
        for n in range(30):  # Redis away for b: a known call and unknown ones
            for call_id in (PHONE, f"no-such-call-{n}"):
                with pytest.raises(RedisError):
                    await shared_b.claim(call_id, "superseded")
        assert shared_b._locks == {}

        # Back: b claims, holds a copy (its lock may stay with it), then drops it.
        proxy.restore()
        session = await shared_b.claim(PHONE, "superseded")
        await shared_b.save_now(session)
        assert session.lease is None and set(shared_b._locks) <= {PHONE}
        await calls.delete(b, PHONE)
        assert shared_b._locks == {} and shared_a._locks == {}
    finally:
        for chat in (a, b):
            await _stop(chat)
        await proxy.stop()


@pytest.mark.timeout(60)
async def test_a_calls_saves_and_claims_still_take_turns(redis_url: str,
                                                         redis_prefix: str) -> None:
    box = SecretBox(SECRET_KEY)
    store = GatedStore(redis_url, redis_prefix, box, 30)
    chat, shared = await _worker(redis_url, redis_prefix, store)
    try:
        await calls.create(chat, SessionCreate(call_id=PHONE, system_prompt="你是客服"))
        session = await shared.claim(PHONE, "superseded")
        first = session.lease

        # A turn's save in flight: the next turn's claim waits for it, then takes a lease of
        # its own (without the wait it would reuse the lease the save is releasing).
        save = asyncio.create_task(shared.save_now(session))
        await _until(lambda: store.inside == 1)
        claim = asyncio.create_task(shared.claim(PHONE, "superseded"))
        await _settle()
        assert not claim.done()
        store.gate.release()
        again = await asyncio.wait_for(claim, 5)
        await save
        assert again is session and again.lease not in (None, first)
        assert await store.holder(PHONE) == again.lease

        # Saves queued on a call whose copy is dropped meanwhile (deleted, expired, rebuilt
        # for a new session): the lock outlives the save that leaves it while another
        # waits, so a save arriving then still waits its turn.
        chat._drop(PHONE)
        newer = await shared.claim(PHONE, "superseded")  # a copy built afresh: lease taken over
        assert newer is not session and newer.lease is not None and session.lease is not None
        chat._drop(PHONE)
        saves = [asyncio.create_task(shared.save_now(session))]
        await _until(lambda: store.inside == 1)
        saves.append(asyncio.create_task(shared.save_now(newer)))
        await _settle()
        store.gate.release()  # the first (its lease lost: not saved); the second goes in
        await asyncio.wait_for(saves[0], 5)
        await _until(lambda: store.inside == 1)
        saves.append(asyncio.create_task(shared.save_now(newer)))
        await _settle()
        assert store.inside == 1  # the third waits for the second
        for _ in range(2):
            store.gate.release()
        await asyncio.wait_for(asyncio.gather(*saves), 5)
        assert store.most == 1
        assert session.lease is None and newer.lease is None
        assert await store.holder(PHONE) is None
        assert shared._locks == {}
    finally:
        for _ in range(10):
            store.gate.release()
        await _stop(chat)


# -- 2. the bus's reconnects -----------------------------------------------------------------

async def _numsub(raw: aioredis.Redis, channel: str) -> int:
    return int((await raw.pubsub_numsub(channel))[0][1])


async def _subscribers(raw: aioredis.Redis, channel: str, n: int) -> None:
    async def reached() -> bool:
        return await _numsub(raw, channel) == n

    await _until(reached)


async def _answer(message: Message) -> Message:
    return {"result": "yielded"}


@pytest.mark.timeout(60)
async def test_bus_reconnects_hold_one_connection(redis_url: str, redis_prefix: str) -> None:
    proxy = _proxy_for(redis_url)
    await proxy.start()
    bus = ChatBus(f"redis://127.0.0.1:{proxy.port}/0", redis_prefix, "w-cut")
    asker = ChatBus(redis_url, redis_prefix, "w-ask")
    raw = aioredis.from_url(redis_url)
    channel = f"{redis_prefix}:chat:w:w-cut"
    try:
        await bus.start(_answer)
        await asker.start(_answer)
        assert await _numsub(raw, channel) == 1
        for _ in range(8):  # the connection cut, each time seen and subscribed again
            proxy.cut(refuse=True)
            proxy.restore()
            await _subscribers(raw, channel, 0)
            await _subscribers(raw, channel, 1)
        assert bus._client is not None
        pool = bus._client.connection_pool
        # redis-py has no public count of the connections handed out: the idle bus holds
        # one, its subscription's (one more per reconnect before the fix).
        assert len(pool._in_use_connections) == 1
        assert len(pool._available_connections) <= 1
        answer = await asker.ask("w-cut", {"op": "yield", "call_id": PHONE}, 2.0)
        assert answer is not None and answer["result"] == "yielded"
    finally:
        await bus.stop()
        await asker.stop()
        await raw.aclose()
        await proxy.stop()


# -- 3. malformed messages -------------------------------------------------------------------

@pytest.mark.timeout(60)
async def test_bad_messages_are_skipped_and_a_yield_still_served(
        redis_url: str, redis_prefix: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=BUS_LOG)
    served: list[Message] = []

    async def handle(message: Message) -> Message:
        served.append(message)
        return {"result": "yielded"}

    holder = ChatBus(redis_url, redis_prefix, "w-holder")
    asker = ChatBus(redis_url, redis_prefix, "w-asker")
    raw = aioredis.from_url(redis_url)
    channel = f"{redis_prefix}:chat:w:w-holder"
    words = "我的卡号是6222"  # what a tool output may carry: never logged
    garbage = [
        f"not json {words}".encode(), b"\xff\xfe", b"[1, 2]", b'"a string"', b"42", b"null",
        b"{}",  # nowhere to answer
        orjson.dumps({"op": "yield", "call_id": PHONE, "reason": words}),  # no rid, no from
        orjson.dumps({"op": "yield", "call_id": PHONE, "rid": 1, "from": "w-asker"}),
        orjson.dumps({"reply": ["x"], "result": words}),
    ]
    try:
        await holder.start(handle)
        await asker.start(_answer)
        for data in garbage:
            await raw.publish(channel, data)
        # Delivered after all of them, on the same subscription: answered at once.
        started = time.perf_counter()
        answer = await asker.ask("w-holder", {"op": "yield", "call_id": PHONE,
                                              "reason": "superseded"}, 2.0)
        assert answer is not None and answer["result"] == "yielded"
        assert time.perf_counter() - started < YIELD_TIMEOUT_S
        assert [(m["op"], m["call_id"], m["reason"]) for m in served] == [
            ("yield", PHONE, "superseded")]
        assert await _numsub(raw, channel) == 1
        skipped = [r for r in caplog.records if r.name == BUS_LOG and "skipped" in r.message]
        assert len(skipped) == len(garbage)
        assert not any("lost" in r.message for r in caplog.records if r.name == BUS_LOG)
        assert words not in caplog.text
    finally:
        await holder.stop()
        await asker.stop()
        await raw.aclose()
