"""Keeping every worker's snapshot at the cluster's configuration generation.

After a write commits, the writing worker publishes the new generation on Redis
(`<prefix>:config-generation`) and reloads its own snapshot meanwhile (the write's answer
waits for its own reload); every subscribed worker reloads when the generation differs from
the one it serves. Independently, each worker polls
`config_state.generation` every `redis.poll_interval_s`: that catches up a worker whose
Redis is down or unset (several workers on SQLite), a message lost during a reconnect, and
doubles as the database health probe. Both loops reconnect by themselves; a reload runs
in the background and never blocks a request.

Without Redis the bus is in-process: the writer has already swapped its own snapshot, and
in-process listeners (`ConfigStore.add_listener`) hear about every swap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Literal

import redis.asyncio as aioredis

from callout_server.config.snapshot import ConfigStore
from callout_server.config.subscription import follow

log = logging.getLogger(__name__)

RedisState = Literal["ok", "down", "disabled"]
DbState = Literal["ok", "down"]

# stop() waits this long for the loops; one still running after it is left behind, logged.
_STOP_TIMEOUT_S = 5.0


class ConfigSync:
    def __init__(self, store: ConfigStore, read_generation: Callable[[], Awaitable[int]], *,
                 redis_url: str, channel_prefix: str, poll_interval_s: float,
                 db_timeout_s: float) -> None:
        self.store = store
        self._read_generation = read_generation
        self.redis_url = redis_url
        self.channel = f"{channel_prefix}:config-generation"
        self.poll_interval_s = poll_interval_s
        self.db_timeout_s = db_timeout_s
        self.origin = f"{os.uname().nodename}:{os.getpid()}"
        self.redis_state: RedisState = "down" if redis_url else "disabled"
        self.db_state: DbState = "ok"
        self._publisher: aioredis.Redis | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._reloads: set[asyncio.Task[None]] = set()  # strong refs until done
        self._kick = asyncio.Event()
        # Checked by the loops: on Python 3.11 a cancellation that lands as a wait_for's
        # future completes (redis-py, drivers) can be swallowed, and a loop would go on.
        self._stopping = False

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """First load (bounded: a dead database must not stop the worker from serving the
        file defaults), then the background loops."""
        try:
            await asyncio.wait_for(self.store.refresh(), self.db_timeout_s * 2)
        except Exception as exc:
            self._db_failed(exc)
        self._stopping = False
        if self.redis_url:
            self._publisher = aioredis.from_url(
                self.redis_url, socket_connect_timeout=1.0, socket_timeout=1.0)
            self._tasks.append(asyncio.create_task(self._subscribe_loop(), name="config-sub"))
        self._tasks.append(asyncio.create_task(self._poll_loop(), name="config-poll"))

    async def stop(self) -> None:
        """Stop the loops, within `_STOP_TIMEOUT_S` whatever they are waiting on."""
        self._stopping = True
        self._kick.set()
        tasks = [*self._tasks, *self._reloads]
        for task in tasks:
            task.cancel()
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=_STOP_TIMEOUT_S)
            for task in done:  # consumed, so no "exception was never retrieved" at exit
                if not task.cancelled():
                    task.exception()
            for task in pending:
                log.error("config sync: task %s did not stop; leaving it behind",
                          task.get_name())
        self._tasks.clear()
        if self._publisher is not None:
            with contextlib.suppress(Exception):
                await self._publisher.aclose()
            self._publisher = None

    # -- after a local write -------------------------------------------------------------
    async def committed(self, generation: int) -> None:
        """A write on this worker committed `generation`: tell the others and swap locally,
        at once, and return when this worker serves it (a writer reads its own write).

        The notice goes out first, so the other workers' loads (a 10,000-term lexicon's
        compile) run beside this one's rather than after it; the write has committed, so
        what they read is what this worker reads. The publish is bounded (1 s) and never
        raises; a lost notice is caught up by the poll loop."""
        publishing = asyncio.ensure_future(self.publish(generation))
        try:
            await asyncio.wait_for(self.store.refresh(expected=generation), self.db_timeout_s * 2)
        except Exception as exc:  # the poll loop retries; the write itself has succeeded
            self._db_failed(exc)
        else:
            self._db_ok()
        finally:
            await publishing

    async def publish(self, generation: int) -> None:
        if self._publisher is None:
            return
        message = json.dumps({"generation": generation, "origin": self.origin})
        try:
            await asyncio.wait_for(self._publisher.publish(self.channel, message), 1.0)
        except Exception as exc:  # other workers will catch up by polling
            self._redis_failed(exc)

    def db_failed(self, exc: BaseException) -> None:
        """A database error seen elsewhere (an admin write): report and re-probe soon."""
        self._db_failed(exc)
        self._kick.set()

    # -- background loops ----------------------------------------------------------------
    async def _poll_loop(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while not self._stopping:
            # Fixed rate (the probe's own duration is not added to the interval), so a
            # change is seen at most one interval (+ one load) after it committed.
            # asyncio.timeout, not wait_for: see `_stopping`.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, last + self._poll_delay() - loop.time())):
                    await self._kick.wait()
            self._kick.clear()
            if self._stopping:
                return
            last = loop.time()
            try:
                async with asyncio.timeout(self.db_timeout_s):
                    generation = await self._read_generation()
                if generation != self.store.current.generation:
                    async with asyncio.timeout(self.db_timeout_s * 2):
                        await self.store.refresh(expected=generation)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._db_failed(exc)
            else:
                self._db_ok()

    def _poll_delay(self) -> float:
        # While the database is down, probe a little faster so recovery is noticed soon.
        interval = self.poll_interval_s
        return min(interval, 1.0) if self.db_state == "down" else interval

    async def _subscribe_loop(self) -> None:
        await follow(self.redis_url, self.channel, stopping=lambda: self._stopping,
                     on_message=self._on_message, on_up=self._on_up,
                     on_down=self._redis_failed)

    async def _on_up(self, _client: aioredis.Redis) -> None:
        self._redis_ok()
        self._kick.set()  # anything published while we were away: poll now

    def _on_message(self, data: bytes | str | None) -> None:
        try:
            generation = int(json.loads(data or b"{}")["generation"])
        except (ValueError, KeyError, TypeError, OverflowError):  # 1e400: int(inf)
            log.warning("ignoring a malformed configuration notice on %s", self.channel)
            return
        if generation != self.store.current.generation:
            task = asyncio.get_running_loop().create_task(self._reload(generation))
            self._reloads.add(task)
            task.add_done_callback(self._reloads.discard)

    async def _reload(self, generation: int) -> None:
        try:
            await asyncio.wait_for(self.store.refresh(expected=generation), self.db_timeout_s * 2)
        except Exception as exc:
            self._db_failed(exc)
        else:
            self._db_ok()  # a successful load proves the database is back

    # -- state for /healthz ----------------------------------------------------------------
    def _db_failed(self, exc: BaseException) -> None:
        if self.db_state != "down":
            log.warning("configuration database unreachable (%s); serving generation %d "
                        "from memory", type(exc).__name__, self.store.current.generation)
        self.db_state = "down"

    def _db_ok(self) -> None:
        if self.db_state != "ok":
            log.info("configuration database reachable again")
        self.db_state = "ok"

    def _redis_failed(self, exc: BaseException) -> None:
        if self.redis_state == "ok":
            log.warning("redis unreachable (%s); falling back to polling every %.1fs",
                        type(exc).__name__, self.poll_interval_s)
        self.redis_state = "down"

    def _redis_ok(self) -> None:
        if self.redis_state == "down":
            log.info("redis subscription established on %s", self.channel)
        self.redis_state = "ok"
