--[[ drop-legacy
  The end of a migration step (adopt-schedules.lua): deletes from the registry of a version before
  shards the definitions a shard now holds, each only when it is still the one read (an older
  version that wrote it again meanwhile keeps it for the next step: compare-and-delete).
  KEYS[1]  <ns>:{<ns>:sched}:schedules  HASH  name -> definition JSON (the legacy registry)
  ARGV[1..] pairs: name, definition JSON as read
  Returns  {deleted, definitions left in the legacy registry}
]]
local n = 0
for a = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[a]) == ARGV[a + 1] then
    redis.call('HDEL', KEYS[1], ARGV[a])
    n = n + 1
  end
end
return {n, redis.call('HLEN', KEYS[1])}
