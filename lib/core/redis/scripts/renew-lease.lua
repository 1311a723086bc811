--[[ renew-lease
  Extend the leader lease only if we still hold it (compare-and-renew; never a bare PEXPIRE).
  KEYS[1]  <ns>:{<ns>:sched}:lease    STRING  "<instanceId>|<term>"
  KEYS[2]  <ns>:{<ns>:sched}:version  STRING  schedule registry version
  ARGV[1]  holder                     string  the lease value we believe is ours
  ARGV[2]  leaderTtlMs                integer ms
  Returns  {code, registry version, redisNowMs} (codes: protocol.ts RENEW_RESULT): 1 renewed |
           0 notOurs (expired or taken)
]]
-- @include now-ms
local now = nowMs()
local version = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, version, now}
end
return {0, version, now}
