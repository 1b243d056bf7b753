"""Where chat sessions live between turns: this worker's memory, or Redis for every worker.

    store = LocalSessions()                                   # default: memory is the store
    store = RedisSessions(url, prefix, box, subkey, ttl_s)   # CALLOUT_REDIS_URL set
    await store.create(call_id, state) -> bool                # False: it exists already
    await store.load(call_id, known) -> (version, state) | None     # state None: unchanged
    await store.take(call_id, token, ttl_s, known)  # the lease and the session, one trip
    await store.acquire(call_id, token, ttl_s) -> holder | None     # None: it is ours now
    await store.save(call_id, state, token, release=True) -> version | None  # None: lost it
    await store.holder(call_id) -> the lease's holder, if any
    await store.delete(call_id) -> bool                        # True: there was one

Redis keys, under `[redis] channel_prefix`, named by an HMAC of the call id (a call id may
be a phone number; it never appears in Redis):
- `<prefix>:chat:s:<digest>`: a hash `{v, data}`, `data` the session state (session_state.py)
  encrypted with `CALLOUT_SECRET_KEY` (SecretBox), expiring `[chat] session_ttl_s` after the
  last write;
- `<prefix>:chat:lease:<digest>`: the turn lease, `<worker>:<token>` of the worker running a
  turn of the call (`SET NX PX`); a save is accepted only from the lease's holder, and a
  completed turn's save releases it in the same script, so a worker presumed dead (its lease
  taken over) can never write an older history over a newer one.
A turn pays two round trips: the lease with the session (`take`), and the save that releases
it; nothing per token.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Protocol

import orjson
import redis.asyncio as aioredis

from callout_server.config.secrets import SecretBox

_CREATE = """if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'data', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1"""
# KEYS: session, lease; ARGV: data, ttl ms, token, release (1/0). Returns the new version.
_SAVE = """if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'data', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[4] == '1' then redis.call('DEL', KEYS[2]) end
return v"""
# KEYS: session, lease; ARGV: token, ttl ms, known version. The lease and the session in
# one round trip: {0, holder} taken by another; {2} no session; {1, v[, data]} ours now.
_TAKE = """if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {0, redis.call('GET', KEYS[2]) or ''} end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then redis.call('DEL', KEYS[2]) return {2} end
if v == ARGV[3] then return {1, v} end
return {1, v, redis.call('HGET', KEYS[1], 'data')}"""
_RELEASE = """if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"""

State = dict[str, Any]
# take(): (None, version, state or None if unchanged) ours; (holder, 0, None) another's;
# None: no such session.
Taken = tuple[str | None, int, State | None] | None
CHAT_PURPOSE = b"callout chat session ids"  # SecretBox.subkeys: the key names' HMAC


class SessionStore(Protocol):
    shared: bool

    async def create(self, call_id: str, state: State) -> bool: ...
    async def load(self, call_id: str, known: int) -> tuple[int, State | None] | None: ...
    async def acquire(self, call_id: str, token: str, ttl_s: float,
                      *, force: bool = False) -> str | None: ...
    async def take(self, call_id: str, token: str, ttl_s: float,
                   known: int) -> Taken: ...
    async def release(self, call_id: str, token: str) -> None: ...
    async def holder(self, call_id: str) -> str | None: ...
    async def save(self, call_id: str, state: State, token: str, *,
                   release: bool) -> int | None: ...
    async def delete(self, call_id: str) -> bool: ...
    async def aclose(self) -> None: ...


class LocalSessions:
    """Today's behaviour: the worker's memory (`ChatService.sessions`) is the only copy."""

    shared = False

    async def create(self, call_id: str, state: State) -> bool:
        return True

    async def load(self, call_id: str, known: int) -> tuple[int, State | None] | None:
        return None

    async def acquire(self, call_id: str, token: str, ttl_s: float,
                      *, force: bool = False) -> str | None:
        return None

    async def take(self, call_id: str, token: str, ttl_s: float, known: int) -> Taken:
        return None

    async def release(self, call_id: str, token: str) -> None:
        return None

    async def holder(self, call_id: str) -> str | None:
        return None

    async def save(self, call_id: str, state: State, token: str, *,
                   release: bool) -> int | None:
        return None

    async def delete(self, call_id: str) -> bool:
        return False

    async def aclose(self) -> None:
        return None


class RedisSessions:
    shared = True

    def __init__(self, redis_url: str, prefix: str, box: SecretBox, subkey: bytes,
                 ttl_s: float) -> None:
        self._client = aioredis.from_url(redis_url, socket_connect_timeout=1.0,
                                         socket_timeout=2.0)
        self._prefix = f"{prefix}:chat"
        self._box = box
        self._subkey = subkey
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._create = self._client.register_script(_CREATE)
        self._save = self._client.register_script(_SAVE)
        self._release = self._client.register_script(_RELEASE)
        self._take = self._client.register_script(_TAKE)

    def digest(self, call_id: str) -> str:
        return hmac.new(self._subkey, call_id.encode(), hashlib.sha256).hexdigest()[:32]

    def _keys(self, call_id: str) -> tuple[str, str]:
        d = self.digest(call_id)
        return f"{self._prefix}:s:{d}", f"{self._prefix}:lease:{d}"

    def _seal(self, state: State) -> str:
        return self._box.encrypt(orjson.dumps(state).decode())

    async def create(self, call_id: str, state: State) -> bool:
        key, _ = self._keys(call_id)
        return bool(await self._create(keys=[key], args=[self._seal(state), self._ttl_ms]))

    async def load(self, call_id: str, known: int) -> tuple[int, State | None] | None:
        key, _ = self._keys(call_id)
        version, data = await self._client.hmget(key, ["v", "data"])
        if version is None or data is None:
            return None
        v = int(version)
        if v == known:
            return v, None  # this worker's copy is the newest: nothing to decrypt
        return v, orjson.loads(self._box.decrypt(data.decode()))

    async def acquire(self, call_id: str, token: str, ttl_s: float,
                      *, force: bool = False) -> str | None:
        _, lease = self._keys(call_id)
        px = max(1, int(ttl_s * 1000))
        if force:
            await self._client.set(lease, token, px=px)
            return None
        if await self._client.set(lease, token, nx=True, px=px):
            return None
        holder = await self._client.get(lease)
        if holder is None:  # released meanwhile: try once more
            return None if await self._client.set(lease, token, nx=True, px=px) else "?"
        return holder.decode()

    async def take(self, call_id: str, token: str, ttl_s: float, known: int) -> Taken:
        """The lease and, when it is ours, the stored session if newer than `known`."""
        key, lease = self._keys(call_id)
        reply = await self._take(keys=[key, lease],
                                 args=[token, max(1, int(ttl_s * 1000)), str(known)])
        if reply[0] == 0:
            return reply[1].decode() or "?", 0, None
        if reply[0] == 2:
            return None
        version = int(reply[1])
        state = orjson.loads(self._box.decrypt(reply[2].decode())) if len(reply) > 2 else None
        return None, version, state

    async def release(self, call_id: str, token: str) -> None:
        _, lease = self._keys(call_id)
        await self._release(keys=[lease], args=[token])

    async def holder(self, call_id: str) -> str | None:
        _, lease = self._keys(call_id)
        value = await self._client.get(lease)
        return value.decode() if value is not None else None

    async def save(self, call_id: str, state: State, token: str, *,
                   release: bool) -> int | None:
        key, lease = self._keys(call_id)
        v = await self._save(keys=[key, lease],
                             args=[self._seal(state), self._ttl_ms, token, "1" if release else "0"])
        return int(v) or None

    async def delete(self, call_id: str) -> bool:
        """Drop the session and its lease; True when there was a session."""
        key, lease = self._keys(call_id)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.delete(lease)
            gone, _ = await pipe.execute()
        return bool(gone)

    async def aclose(self) -> None:
        await self._client.aclose()
