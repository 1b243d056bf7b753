"""Where chat sessions live between turns: this worker's memory, or Redis for every worker.

    store = LocalSessions()                                   # default: memory is the store
    store = RedisSessions(url, prefix, box, ttl_s)           # CALLOUT_REDIS_URL set
    await store.create(call_id, settings, turns) -> sid | None   # None: it exists already
    await store.load(call_id, known) -> Stored | None         # None: no such session
    await store.take(call_id, token, ttl_s, known)  # the lease and the session, one trip
    await store.acquire(call_id, token, ttl_s) -> holder | None     # None: it is ours now
    await store.save(call_id, sid, turns, token, release=True) -> version | None  # None: lost
    await store.holder(call_id) -> the lease's holder, if any
    await store.delete(call_id) -> bool                        # True: there was one

`known` is what this worker's copy is, `(sid, version)` (`NOTHING`: no copy): the store
sends only what the copy lacks. A session is two parts (session_state.py): its settings,
written once at create and sent to a worker only the first time it serves the call, and its
turns, sent when newer than the copy. `sid` names the session's incarnation: a call id
deleted and created again (a call id may be a phone number, dialled again later) is another
session, and a copy of the old one is never taken for it.

Redis keys, under `[redis] channel_prefix`, named by an HMAC of the call id (a call id may
be a phone number; it never appears in Redis):
- `<prefix>:chat:s:<digest>`: a hash `{v, sid, settings, turns}`, the two parts encrypted
  (AES-GCM under subkeys of `CALLOUT_SECRET_KEY`, `SecretBox.sealer`; each bound to its key
  and field), expiring `[chat] session_ttl_s` after the last write;
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
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import redis.asyncio as aioredis

from callout_server.config.secrets import SecretBox

_CREATE = """if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'sid', ARGV[1], 'settings', ARGV[2], 'turns', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1"""
# KEYS: session, lease; ARGV: sid, turns, ttl ms, token, release (1/0). The new version.
_SAVE = """if redis.call('GET', KEYS[2]) ~= ARGV[4] then return 0 end
if redis.call('HGET', KEYS[1], 'sid') ~= ARGV[1] then return 0 end
local v = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'turns', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] == '1' then redis.call('DEL', KEYS[2]) end
return v"""
# What a copy `(ARGV[1] sid, ARGV[2] version)` lacks: {v, sid[, turns[, settings]]}, or {}
# (none, or one saved in format 1 by an older version: unreadable here, as if gone).
_PARTS = """local s = redis.call('HMGET', KEYS[1], 'v', 'sid')
if not s[1] or not s[2] then return {} end
if s[2] ~= ARGV[1] then
  local p = redis.call('HMGET', KEYS[1], 'turns', 'settings')
  return {s[1], s[2], p[1], p[2]} end
if s[1] == ARGV[2] then return {s[1], s[2]} end
return {s[1], s[2], redis.call('HGET', KEYS[1], 'turns')}"""
# KEYS: session, lease; ARGV: known sid, known version, token, ttl ms. The lease and the
# session in one round trip: {0, holder} taken by another; {2} no session; {1, parts} ours.
_TAKE = f"""if not redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then
  return {{0, redis.call('GET', KEYS[2]) or ''}} end
local function parts()
{_PARTS}
end
local p = parts()
if #p == 0 then redis.call('DEL', KEYS[2]) return {{2}} end
return {{1, p}}"""
_RELEASE = """if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0"""

State = dict[str, Any]
Known = tuple[str, int]  # this worker's copy: (sid, version)
NOTHING: Known = ("", -1)
CHAT_PURPOSE = b"callout chat session ids"  # SecretBox.subkeys: the key names' HMAC
STATE_PURPOSE = b"callout chat session state"  # SecretBox.sealer: the parts' encryption


@dataclass(frozen=True, slots=True)
class Stored:
    """The stored session, as much of it as the asking copy lacks."""

    version: int
    sid: str
    turns: State | None = None  # None: the copy's turns are the newest
    settings: State | None = None  # None: the copy is of this session (same sid)


# take(): the holder of another's lease (str), the session with the lease ours (Stored),
# or None: no such session.
Taken = str | Stored | None


class SessionStore(Protocol):
    shared: bool

    async def create(self, call_id: str, settings: State, turns: State) -> str | None: ...
    async def load(self, call_id: str, known: Known) -> Stored | None: ...
    async def acquire(self, call_id: str, token: str, ttl_s: float,
                      *, force: bool = False) -> str | None: ...
    async def take(self, call_id: str, token: str, ttl_s: float, known: Known) -> Taken: ...
    async def release(self, call_id: str, token: str) -> None: ...
    async def holder(self, call_id: str) -> str | None: ...
    async def save(self, call_id: str, sid: str, turns: State, token: str, *,
                   release: bool) -> int | None: ...
    async def delete(self, call_id: str) -> bool: ...
    async def aclose(self) -> None: ...


class LocalSessions:
    """Today's behaviour: the worker's memory (`ChatService.sessions`) is the only copy."""

    shared = False

    async def create(self, call_id: str, settings: State, turns: State) -> str | None:
        return ""

    async def load(self, call_id: str, known: Known) -> Stored | None:
        return None

    async def acquire(self, call_id: str, token: str, ttl_s: float,
                      *, force: bool = False) -> str | None:
        return None

    async def take(self, call_id: str, token: str, ttl_s: float, known: Known) -> Taken:
        return None

    async def release(self, call_id: str, token: str) -> None:
        return None

    async def holder(self, call_id: str) -> str | None:
        return None

    async def save(self, call_id: str, sid: str, turns: State, token: str, *,
                   release: bool) -> int | None:
        return None

    async def delete(self, call_id: str) -> bool:
        return False

    async def aclose(self) -> None:
        return None


class RedisSessions:
    shared = True

    def __init__(self, redis_url: str, prefix: str, box: SecretBox, ttl_s: float) -> None:
        self._client = aioredis.from_url(redis_url, socket_connect_timeout=1.0,
                                         socket_timeout=2.0)
        self._prefix = f"{prefix}:chat"
        self._sealer = box.sealer(STATE_PURPOSE, "chat session state")
        self._subkey = box.subkeys(CHAT_PURPOSE)[0]
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._create = self._client.register_script(_CREATE)
        self._save = self._client.register_script(_SAVE)
        self._release = self._client.register_script(_RELEASE)
        self._take = self._client.register_script(_TAKE)
        self._load = self._client.register_script(_PARTS)

    def digest(self, call_id: str) -> str:
        return hmac.new(self._subkey, call_id.encode(), hashlib.sha256).hexdigest()[:32]

    def _keys(self, call_id: str) -> tuple[str, str]:
        d = self.digest(call_id)
        return f"{self._prefix}:s:{d}", f"{self._prefix}:lease:{d}"

    def _seal(self, key: str, field: str, part: State) -> bytes:
        return self._sealer.seal(orjson.dumps(part), f"{key}/{field}".encode())

    def _open(self, key: str, field: str, sealed: bytes | None) -> State | None:
        if sealed is None:
            return None
        return orjson.loads(self._sealer.open(sealed, f"{key}/{field}".encode()))

    def _stored(self, key: str, parts: list[Any]) -> Stored:
        turns = self._open(key, "turns", parts[2]) if len(parts) > 2 else None
        settings = self._open(key, "settings", parts[3]) if len(parts) > 3 else None
        return Stored(int(parts[0]), parts[1].decode(), turns, settings)

    async def create(self, call_id: str, settings: State, turns: State) -> str | None:
        """A new session; its `sid`, or None when the call has one already."""
        key, _ = self._keys(call_id)
        sid = secrets.token_hex(8)
        made = await self._create(keys=[key], args=[
            sid, self._seal(key, "settings", settings), self._seal(key, "turns", turns),
            self._ttl_ms])
        return sid if made else None

    async def load(self, call_id: str, known: Known) -> Stored | None:
        key, _ = self._keys(call_id)
        parts = await self._load(keys=[key], args=[known[0], str(known[1])])
        return self._stored(key, parts) if parts else None

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

    async def take(self, call_id: str, token: str, ttl_s: float, known: Known) -> Taken:
        """The lease and, when it is ours, what of the stored session `known` lacks."""
        key, lease = self._keys(call_id)
        reply = await self._take(keys=[key, lease], args=[
            known[0], str(known[1]), token, max(1, int(ttl_s * 1000))])
        if reply[0] == 0:
            return reply[1].decode() or "?"
        return None if reply[0] == 2 else self._stored(key, reply[1])

    async def release(self, call_id: str, token: str) -> None:
        _, lease = self._keys(call_id)
        await self._release(keys=[lease], args=[token])

    async def holder(self, call_id: str) -> str | None:
        _, lease = self._keys(call_id)
        value = await self._client.get(lease)
        return value.decode() if value is not None else None

    async def save(self, call_id: str, sid: str, turns: State, token: str, *,
                   release: bool) -> int | None:
        key, lease = self._keys(call_id)
        v = await self._save(keys=[key, lease], args=[
            sid, self._seal(key, "turns", turns), self._ttl_ms, token,
            "1" if release else "0"])
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
