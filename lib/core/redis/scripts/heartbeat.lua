--[[ heartbeat
  Record that a scheduler instance is alive and keep its declaration and the names set of its
  digest from expiring (a set's TTL is only ever raised here: instances with another heartbeat
  share it); forget instances not seen for a day. Constant time, whatever the number of schedules.
  KEYS[1]  <ns>:{<ns>:sched}:instances               ZSET    instance id -> last seen (epoch ms)
  KEYS[2]  <ns>:{<ns>:sched}:declaration:<instance>  STRING  digest of the names it declares
  KEYS[3]  <ns>:{<ns>:sched}:names:<digest>          SET     the names of the digest (shared)
  ARGV[1]  instanceId                                string
  ARGV[2]  declaredTtlMs                             integer ms
  ARGV[3]  declares                                  "1" when the instance declares schedules
  Returns  {code, redisNowMs} (codes: protocol.ts HEARTBEAT_RESULT): 1 ok | 0 declaredLost (its
           declaration or the names set is gone: Redis lost data; declare again)
]]
-- @include now-ms
local now = nowMs()
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
if ARGV[3] == '1' then
  local ttl = tonumber(ARGV[2])
  if redis.call('PEXPIRE', KEYS[2], ttl) == 0 then return {0, now} end
  local left = redis.call('PTTL', KEYS[3])
  if left == -2 then return {0, now} end
  if left < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
end
return {1, now}
