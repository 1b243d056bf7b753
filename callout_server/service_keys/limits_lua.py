"""The one Lua script every limited request runs in Redis: all three limits, atomically.

Why a script (redis-py's `register_script`: EVALSHA, EVAL once if the script is not
cached): the check and the count must be one step, or two workers both see room for the
last request. A Lua script runs alone on the Redis server, so a burst split over any number
of workers is counted exactly; it takes Redis's own clock (`TIME`), so workers' clocks do
not matter; it is one round trip. Libraries considered: `limits` (rate windows only, no
in-flight leases, no token budget) and `aiolimiter` (one process only). Forty lines of Lua
we test against a real Redis fit better than either.

    KEYS  1 rpm window     sorted set: one member per admitted request, scored by its time
          2 in flight      sorted set: one member per running request, scored by the time
                           its lease runs out (a worker that dies leaks nothing for long)
          3 tokens today   counter, added to after each call (INCRBY, not here)
    ARGV  rpm, max_in_flight, daily_tokens (0: no such limit), member, lease ms,
          ms until the UTC day ends
    ->    {0, 0, 0} admitted, else {limit (1 rpm, 2 in flight, 3 budget), its value,
          ms until it has room}
"""

from __future__ import annotations

ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm, mif, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local member, lease = ARGV[4], tonumber(ARGV[5])
if budget > 0 then
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used >= budget then return {3, budget, tonumber(ARGV[6])} end
end
if mif > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= mif then return {2, mif, 1000} end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  if redis.call('ZCARD', KEYS[1]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {1, rpm, tonumber(oldest[2]) + 60000 - now}
  end
  redis.call('ZADD', KEYS[1], now, member)
  redis.call('PEXPIRE', KEYS[1], 61000)
end
if mif > 0 then
  redis.call('ZADD', KEYS[2], now + lease, member)
  redis.call('PEXPIRE', KEYS[2], lease + 1000)
end
return {0, 0, 0}
"""
