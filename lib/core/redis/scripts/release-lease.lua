--[[ release-lease
  Resign: delete the lease only if we hold it (compare-and-delete), then announce it on the
  resignation channel so a follower acquires at once instead of waiting for the TTL.
  KEYS[1]  <ns>:{<ns>:sched}:lease  STRING  "<instanceId>|<term>"
  ARGV[1]  holder                   string  the lease value we believe is ours
  ARGV[2]  channel                  string  <ns>:{<ns>:sched}:resign (a channel, not a key)
  Returns  code (codes: protocol.ts RELEASE_RESULT): 1 released | 0 notOurs (nothing done)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return 0
