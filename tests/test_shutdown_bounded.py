"""A worker's background loops stop, and stop in bounded time, even when a cancellation is lost.

On Python 3.11 `asyncio.wait_for` (used inside redis-py and the database drivers) returns
the inner result, or raises TimeoutError, when the cancellation lands just as its future
completes: the cancellation is swallowed. A loop that then goes round again used to hang the
worker's shutdown (seen in the suite as a 2-minute teardown in tests/test_auth.py). Each loop
also checks a stop flag, and each stop() waits a bounded time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio.client import PubSub

from callout_server.auth.service import AuthService
from callout_server.config.bus import ConfigSync
from callout_server.config.settings import Settings
from callout_server.config.snapshot import ConfigStore, file_snapshot
from callout_server.db.engine import Database
from tests.fixtures.calllog import wait_until


class Swallower:
    """A wait that turns a cancellation into TimeoutError, as a 3.11 wait_for can.

    `inside` is set while it waits, so a test stops the loop exactly there.
    """

    def __init__(self) -> None:
        self.inside = asyncio.Event()
        self.calls = 0

    async def wait(self, seconds: float = 0.05) -> None:
        self.calls += 1
        self.inside.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            raise TimeoutError from None
        finally:
            self.inside.clear()


def _sync(settings: Settings, read_generation, *, redis_url: str = "") -> ConfigSync:
    store = ConfigStore(file_snapshot(settings.file_llm_configs),
                        lambda: asyncio.sleep(0, file_snapshot(settings.file_llm_configs)))
    return ConfigSync(store, read_generation, redis_url=redis_url, channel_prefix="stop-test",
                      poll_interval_s=0.01, db_timeout_s=5.0)


async def _stop_within(stop: Callable[[], Awaitable[None]], bound_s: float = 3.0) -> None:
    started = time.monotonic()
    await asyncio.wait_for(stop(), 30)  # the old code never returned: fail, do not hang
    assert time.monotonic() - started < bound_s


async def test_config_poll_loop_stops_when_the_probe_swallows_the_cancellation(
        make_settings: Callable[..., Settings]) -> None:
    probe = Swallower()

    async def read_generation() -> int:
        await probe.wait()
        return 0

    sync = _sync(make_settings(), read_generation)
    await sync.start()
    await asyncio.wait_for(probe.inside.wait(), 10)
    await _stop_within(sync.stop)
    calls = probe.calls
    await asyncio.sleep(0.2)
    assert probe.calls == calls  # nothing left running


async def test_redis_subscriber_stops_when_get_message_swallows_the_cancellation(
        make_settings: Callable[..., Settings], redis_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Swallower()

    async def get_message(self: PubSub, *args: object, **kwargs: object) -> None:
        await reads.wait()

    async def read_generation() -> int:
        return 0

    monkeypatch.setattr(PubSub, "get_message", get_message)
    sync = _sync(make_settings(**{"redis.poll_interval_s": 3600}), read_generation,
                 redis_url=redis_url)
    sync.poll_interval_s = 3600  # only the subscriber matters here
    await sync.start()
    await wait_until(lambda: sync.redis_state == "ok")
    await asyncio.wait_for(reads.inside.wait(), 10)
    await _stop_within(sync.stop)


async def test_auth_retry_loop_stops_when_a_bootstrap_swallows_the_cancellation(
        make_settings: Callable[..., Settings], unused_tcp_port: int) -> None:
    # Never connected to: bootstrap is replaced by one that finds the database down, slowly.
    dead = Database(f"postgresql+asyncpg://postgres@127.0.0.1:{unused_tcp_port}/nope")
    auth = AuthService(make_settings().auth, dead)
    attempt = Swallower()

    async def bootstrap() -> None:
        await attempt.wait()
        raise ConnectionRefusedError

    auth.bootstrap = bootstrap  # type: ignore[method-assign]
    auth._retry = asyncio.create_task(auth._bootstrap_when_db_returns(interval_s=0.01))
    await asyncio.wait_for(attempt.inside.wait(), 10)
    await _stop_within(auth.stop)
    await dead.dispose()
