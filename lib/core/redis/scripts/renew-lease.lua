--[[ renew-lease
  Extend the leader lease only if we still hold it (compare-and-renew; never a bare PEXPIRE).
  KEYS[1]  <ns>:{<ns>:sched}:lease    STRING  "<instanceId>|<term>"
  KEYS[2]  <ns>:{<ns>:sched}:version  STRING  schedule registry version
  ARGV[1]  holder                     string  the lease value we believe is ours
  ARGV[2]  leaderTtlMs                integer ms
  Returns  {1 renewed | 0 not ours (expired or taken), registry version, redisNowMs}
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local version = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, version, now}
end
return {0, version, now}
