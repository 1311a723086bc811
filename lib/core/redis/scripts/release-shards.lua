--[[ release-shards
  An instance that stops lets go of its shard leases and its membership at once (docs/scheduler-shards.md):
  each shard whose lease still names it is freed, and the others are told on the resign channel,
  so they take them without waiting for the leases to expire.
  KEYS[1]  <ns>:{<ns>:sched}:shards   HASH  shard -> "<instanceId>|<term>|<expiresAtMs>"
  KEYS[2]  <ns>:{<ns>:sched}:members  ZSET  instanceId -> expiresAt (epoch ms)
  ARGV[1]  instanceId                 string
  ARGV[2]  channel                    <ns>:{<ns>:sched}:resign (a channel, not a key)
  Returns  how many shards were released
]]
local entries = redis.call('HGETALL', KEYS[1])
local released = 0
local prefix = ARGV[1] .. '|'
for i = 1, #entries, 2 do
  if string.sub(entries[i + 1], 1, #prefix) == prefix and string.match(string.sub(entries[i + 1], #prefix + 1), '^%d+|%d+$') then
    redis.call('HDEL', KEYS[1], entries[i])
    released = released + 1
  end
end
redis.call('ZREM', KEYS[2], ARGV[1])
if released > 0 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return released
