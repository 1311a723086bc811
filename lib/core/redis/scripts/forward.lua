--[[ forward
  Move due tasks from the scheduled and retry sets into the stream, by Redis server time.
  Safe to run from any number of servers at once: each task moves exactly once.
  KEYS[1]  <ns>:{<ns>:<q>}:stream     STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:scheduled  ZSET   task id -> process-at (epoch ms)
  KEYS[3]  <ns>:{<ns>:<q>}:retry      ZSET   task id -> retry-at (epoch ms)
  KEYS[4]  <ns>:{<ns>:<q>}:tasks      HASH   task id -> encoded task (task-entry storedTask: either form)
  ARGV[1]  limit                      integer most tasks moved per set per call
  Returns  {moved, nextDueMs (-1 when both sets are empty: protocol.ts NONE_DUE), nowMs (Redis time)}
]]
-- @include now-ms
-- @include task-entry
local now = nowMs()
local sets = {KEYS[2], KEYS[3]}
local moved = 0
for _, set in ipairs(sets) do
  local ids = redis.call('ZRANGEBYSCORE', set, '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
  for _, id in ipairs(ids) do
    local v = redis.call('HGET', KEYS[4], id)
    if v then
      addEntry(KEYS[1], storedTask(v, id))
      redis.call('HDEL', KEYS[4], id)
      moved = moved + 1
    end
    redis.call('ZREM', set, id)
  end
end
local nextDue = -1
for _, set in ipairs(sets) do
  local first = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  if first[2] then
    local s = tonumber(first[2])
    if nextDue < 0 or s < nextDue then nextDue = s end
  end
end
return {moved, nextDue, now}
