--[[ acquire-lease
  Become leader if nobody holds the lease: SET NX PX semantics, plus a fencing term that
  increases with every acquisition and never decreases, even when its key is lost (a FLUSHDB, a
  restart without persistence): it is max(INCR, Redis time in ms), so a lost counter restarts
  above every term handed out before.
  KEYS[1]  <ns>:{<ns>:sched}:lease   STRING  "<instanceId>|<term>", PX leaderTtlMs
  KEYS[2]  <ns>:{<ns>:sched}:term    STRING  counter (seeded from Redis time)
  KEYS[3]  <ns>:{<ns>:sched}:leader  HASH    { instance, term, since }
  ARGV[1]  instanceId                string
  ARGV[2]  leaderTtlMs               integer ms
  Returns  {code, value, redisNowMs} (codes: protocol.ts ACQUIRE_RESULT):
           {1 acquired (or already ours, renewed), term, redisNowMs} |
           {0 heldByOther, pttlMs of the current lease, redisNowMs}
]]
-- @include now-ms
-- @include rising-counter
local now = nowMs()
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, '|', 1, true)
  if sep and string.sub(cur, 1, sep - 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(string.sub(cur, sep + 1)), now}
  end
  return {0, redis.call('PTTL', KEYS[1]), now}
end
local term = risingCounter(KEYS[2], now)
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. term, 'PX', ARGV[2])
redis.call('HSET', KEYS[3], 'instance', ARGV[1], 'term', term, 'since', now)
return {1, term, now}
