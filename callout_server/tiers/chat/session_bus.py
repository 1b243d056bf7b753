"""Requests between workers about a call's running turn: Redis pub/sub, one channel each.

    bus = ChatBus(url, prefix, worker)           # worker: this process's id in lease tokens
    await bus.start(handle)                      # handle(message) -> reply, on the holder
    reply = await bus.ask(worker, message, timeout_s)   # None: nobody answered (dead)
    await bus.stop()

Each worker listens on `<prefix>:chat:w:<worker>`. `ask` publishes to the holder's channel
and waits for the reply on its own; `PUBLISH` says how many listened, so a worker that is
gone (no subscriber) is known at once, without waiting for the timeout. Messages are small
JSON objects: a call id and what to do (`yield` with a reason, or `tool` with an output);
they carry no transcript but a tool output's own text, which the holder applies. A message
that is not one of those is logged (its size only) and skipped: the subscription stays, so
no request is missed. A lost connection is closed before the next subscription is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import redis.asyncio as aioredis

log = logging.getLogger(__name__)

Message = dict[str, Any]
Handler = Callable[[Message], Awaitable[Message]]


class ChatBus:
    def __init__(self, redis_url: str, prefix: str, worker: str) -> None:
        self._url = redis_url
        self._prefix = f"{prefix}:chat:w:"
        self.worker = worker
        self._client: aioredis.Redis | None = None
        self._task: asyncio.Task[None] | None = None
        self._handle: Handler | None = None
        self._waiting: dict[str, asyncio.Future[Message]] = {}
        self._serving: set[asyncio.Task[None]] = set()
        self._ready = asyncio.Event()

    async def start(self, handle: Handler) -> None:
        self._handle = handle
        self._client = aioredis.from_url(self._url, socket_connect_timeout=1.0,
                                         socket_timeout=2.0)
        self._task = asyncio.create_task(self._listen_loop(), name="chat-bus")
        with contextlib.suppress(TimeoutError):  # Redis down: turns go on, on this worker
            await asyncio.wait_for(self._ready.wait(), 2.0)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for task in list(self._serving):
            task.cancel()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None

    async def ask(self, worker: str, message: Message, timeout_s: float) -> Message | None:
        assert self._client is not None
        rid = uuid.uuid4().hex
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        try:
            listeners = await self._client.publish(
                self._prefix + worker, orjson.dumps({**message, "rid": rid, "from": self.worker}))
            if not listeners:
                return None  # that worker is gone
            return await asyncio.wait_for(future, timeout_s)
        except TimeoutError:
            return None
        finally:
            self._waiting.pop(rid, None)

    async def _listen_loop(self) -> None:
        while True:
            assert self._client is not None
            pubsub = self._client.pubsub()
            try:
                await pubsub.subscribe(self._prefix + self.worker)
                self._ready.set()
                async for raw in pubsub.listen():
                    if raw.get("type") == "message":
                        self._receive(raw["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._ready.clear()
                log.warning("chat bus: redis subscription lost (%s); retrying",
                            type(exc).__name__)
            finally:
                # Each PubSub holds a pool connection (and, if it is still up, a
                # subscription on our channel) until closed: one per retry, otherwise.
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(0.5)

    def _receive(self, data: bytes | str) -> None:
        """One message off the channel. A malformed one is skipped, not raised: raising
        would drop the subscription, and a yield request sent meanwhile would be lost (its
        asker then takes the lease over and the running turn is lost)."""
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            log.warning("chat bus: skipped a message that is not JSON (%d bytes)", len(data))
            return
        if not isinstance(message, dict) or not _well_formed(message):
            # Its size and type only: a tool output may hold a customer's words.
            log.warning("chat bus: skipped a malformed message (%s, %d bytes)",
                        type(message).__name__, len(data))
            return
        self._on_message(message)

    def _on_message(self, message: Message) -> None:
        reply_to = message.get("reply")
        if reply_to is not None:
            future = self._waiting.get(reply_to)
            if future is not None and not future.done():
                future.set_result(message)
            return
        task = asyncio.create_task(self._serve(message))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    async def _serve(self, message: Message) -> None:
        assert self._handle is not None and self._client is not None
        try:
            reply = await self._handle(message)
        except Exception:
            log.exception("chat bus: a request failed")
            reply = {"result": "failed"}
        with contextlib.suppress(Exception):
            await self._client.publish(self._prefix + str(message["from"]),
                                       orjson.dumps({**reply, "reply": message["rid"]}))


def _well_formed(message: Message) -> bool:
    """A reply (`reply`: the request id) or a request (`rid`, `from`: where to answer)."""
    if "reply" in message:
        return isinstance(message["reply"], str)
    return isinstance(message.get("rid"), str) and isinstance(message.get("from"), str)
