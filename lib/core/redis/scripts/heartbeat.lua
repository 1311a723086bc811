--[[ heartbeat
  Record that a scheduler instance is alive and keep its declared-schedules set from expiring;
  forget instances not seen for a day.
  KEYS[1]  <ns>:{<ns>:sched}:instances            ZSET  instance id -> last seen (epoch ms)
  KEYS[2]  <ns>:{<ns>:sched}:declared:<instance>  SET   names this instance declares
  ARGV[1]  instanceId                             string
  ARGV[2]  declaredTtlMs                          integer ms
  ARGV[3]  declares                               "1" when the instance declares schedules
  Returns  {code, redisNowMs} (codes: protocol.ts HEARTBEAT_RESULT): 1 ok | 0 declaredLost (its
           declared set is gone: Redis lost data; register again)
]]
-- @include now-ms
local now = nowMs()
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
if ARGV[3] == '1' then
  if redis.call('PEXPIRE', KEYS[2], ARGV[2]) == 0 then return {0, now} end
end
return {1, now}
