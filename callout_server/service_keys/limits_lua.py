"""The one Lua script a worker runs to reserve a key's limits in Redis: all three, atomically.

A worker does not ask Redis before every request: it reserves a small batch of `rpm`
admissions and in-flight slots in one step (this script) and admits from that reserve in
memory (reserve.py), asking again in the background before it runs out.

Why a script (redis-py's `register_script`: EVALSHA, EVAL once if the script is not
cached): the check and the count must be one step, or two workers both see room for the
last admission. A Lua script runs alone on the Redis server, so reservations split over any
number of workers never add up past a limit; it takes Redis's own clock (`TIME`), so
workers' clocks do not matter; it is one round trip. Libraries considered: `limits` (rate
windows only, no in-flight leases, no token budget, no batches) and `aiolimiter` (one
process only). Forty lines of Lua we test against a real Redis fit better than either.

    KEYS  1 rpm window     sorted set: one member per reserved admission, scored by the
                           last moment the worker may use it (reserved + hold); it leaves
                           the window `window` ms after that score, so an admission used
                           at any time of its hold is counted for a whole window after it
          2 in flight      sorted set: one member per leased slot, scored by the time its
                           lease runs out (a worker that dies leaks nothing for long)
          3 tokens today   counter, added to in batches after the calls (INCRBY, not here)
    ARGV  1 rpm, 2 admissions wanted, 3 max_in_flight, 4 slots wanted, 5 daily_tokens
          (0: no such limit), 6 member prefix, 7 window ms, 8 hold ms, 9 lease ms
    ->    {budget spent (1/0), admissions granted, admissions left in the window, ms until
           the window has room (when none is left), slots granted, slots left, tokens
           used today}
    members  prefix .. 'a' .. i  (admissions),  prefix .. 's' .. i  (slots), i = 1..granted
"""

from __future__ import annotations

RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm, want, mif = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local wslots, budget, prefix = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local window, hold, lease = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local used = tonumber(redis.call('GET', KEYS[3]) or '0')
if budget > 0 and used >= budget then return {1, 0, 0, 0, 0, 0, used} end
local sg, sleft = 0, 0
if mif > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local free = mif - redis.call('ZCARD', KEYS[2])
  sg = math.max(0, math.min(wslots, free))
  for i = 1, sg do redis.call('ZADD', KEYS[2], now + lease, prefix .. 's' .. i) end
  if sg > 0 then redis.call('PEXPIRE', KEYS[2], lease + 1000) end
  sleft = math.max(0, free - sg)
end
local ag, aleft, wait = 0, 0, 0
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  local room = rpm - redis.call('ZCARD', KEYS[1])
  ag = math.max(0, math.min(want, room))
  for i = 1, ag do redis.call('ZADD', KEYS[1], now + hold, prefix .. 'a' .. i) end
  if ag > 0 then redis.call('PEXPIRE', KEYS[1], window + hold + 1000) end
  aleft = math.max(0, room - ag)
  if aleft == 0 then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    if oldest[2] then wait = math.max(0, tonumber(oldest[2]) + window - now) end
  end
end
return {0, ag, aleft, wait, sg, sleft, used}
"""
