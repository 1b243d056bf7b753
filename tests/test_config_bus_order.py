"""`ConfigSync.committed`: the notice goes out before the writer's own reload is done (the
other workers load beside it, not after it), and the write still returns only once its own
worker serves the new generation; with Redis unreachable the local swap still happens
(real Redis; the snapshot store is a stand-in that records the order)."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass

import redis.asyncio as aioredis

from callout_server.config.bus import ConfigSync
from tests.fixtures.app import free_port


@dataclass
class _Snapshot:
    generation: int


class _Store:
    """Its reload to `expected` waits until `gate` is set (a slow 10,000-term compile)."""

    def __init__(self) -> None:
        self.current = _Snapshot(0)
        self.gate = asyncio.Event()
        self.events: list[str] = []

    async def refresh(self, expected: int | None = None) -> _Snapshot:
        if expected is not None and expected != self.current.generation:
            await asyncio.wait_for(self.gate.wait(), 10)
            self.current = _Snapshot(expected)
            self.events.append(f"swapped {expected}")
        return self.current


def _sync(store: _Store, redis_url: str, prefix: str) -> ConfigSync:
    async def read_generation() -> int:
        return store.current.generation
    return ConfigSync(store, read_generation, redis_url=redis_url,  # type: ignore[arg-type]
                      channel_prefix=prefix, poll_interval_s=60, db_timeout_s=5)


async def test_the_notice_goes_out_before_the_local_reload_is_done(redis_url: str) -> None:
    prefix = f"order-{secrets.token_hex(4)}"
    store = _Store()
    sync = _sync(store, redis_url, prefix)
    listener = aioredis.from_url(redis_url)
    pubsub = listener.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(sync.channel)
    await sync.start()
    try:
        write = asyncio.create_task(sync.committed(7))
        deadline = time.monotonic() + 10
        message = None
        while message is None:  # the other worker hears of generation 7 ...
            assert time.monotonic() < deadline, "no notice while the writer was reloading"
            message = await pubsub.get_message(timeout=0.2)
        assert b'"generation": 7' in message["data"]
        assert store.events == [] and not write.done()  # ... while the writer still reloads
        store.gate.set()
        await asyncio.wait_for(write, 10)  # the write returns once its worker serves 7
        assert store.current.generation == 7 and store.events == ["swapped 7"]
    finally:
        await sync.stop()
        await pubsub.aclose()
        await listener.aclose()


async def test_without_redis_the_writer_still_swaps(redis_url: str) -> None:
    store = _Store()
    store.gate.set()
    sync = _sync(store, f"redis://127.0.0.1:{free_port()}/0", f"order-{secrets.token_hex(4)}")
    await sync.start()
    try:
        started = time.monotonic()
        await asyncio.wait_for(sync.committed(3), 10)
        assert store.current.generation == 3
        assert time.monotonic() - started < 3  # the publish is bounded (1 s), never raised
    finally:
        await sync.stop()


async def test_a_notice_of_an_impossible_generation_is_ignored(redis_url: str) -> None:
    """`{"generation": 1e400}` (JSON's infinity) made int() raise OverflowError in the
    subscriber: the subscription dropped and Redis read as down. Now it is one malformed
    notice, and the next good one is heard."""
    store = _Store()
    store.gate.set()
    prefix = f"order-{secrets.token_hex(4)}"
    sync = _sync(store, redis_url, prefix)
    publisher = aioredis.from_url(redis_url)
    await sync.start()
    try:
        deadline = time.monotonic() + 10
        while sync.redis_state != "ok":
            assert time.monotonic() < deadline, "never subscribed"
            await asyncio.sleep(0.02)
        failures: list[BaseException] = []
        failed = sync._redis_failed
        sync._redis_failed = lambda exc: (failures.append(exc), failed(exc))  # type: ignore[method-assign]
        await publisher.publish(sync.channel, b'{"generation": 1e400}')
        await publisher.publish(sync.channel, b'{"generation": 5}')
        while store.current.generation != 5:
            assert time.monotonic() < deadline, "the good notice after the bad one was lost"
            await asyncio.sleep(0.02)
        assert failures == [] and sync.redis_state == "ok"
    finally:
        await sync.stop()
        await publisher.aclose()
