--[[ set-group-limits
  Change the limit overrides of some groups of one queue, each one atomically (two concurrent
  changes of one group's limits both land: trial 10 lost one to a read-modify-write in Node), and
  keep the count of overridden groups beside the queue's limits.
  KEYS[1]  <ns>:{<ns>:<q>}:group-limits  HASH  group -> JSON { c?, rm?, rd? } (concurrency; rate max, duration ms)
  KEYS[2]  <ns>:{<ns>:<q>}:limits        HASH  the queue's limits; its field goverrides = HLEN of KEYS[1]
  KEYS[3]  <ns>:{<ns>:<q>}:              prefix the queue's key prefix: a group's rate window set keeps its log
                                              (<q>:group-rate:<g>) that long at least (rate-logs)
  ARGV[1..] per group, 4 values: the group; its concurrency; its rate's max; its rate's duration (ms).
           Each value is "" to leave it, "-" to clear it, else the integer to set; a group with
           nothing left is removed
  Returns  the number of groups with an override after the change
]]
-- @include now-ms
-- @include rate-logs
local function apply(stored, field, v)
  if v == '-' then stored[field] = nil elseif v ~= '' then stored[field] = tonumber(v) end
end
for a = 1, #ARGV, 4 do
  local group = ARGV[a]
  local old = redis.call('HGET', KEYS[1], group)
  local stored = old and cjson.decode(old) or {}
  apply(stored, 'c', ARGV[a + 1])
  apply(stored, 'rm', ARGV[a + 2])
  apply(stored, 'rd', ARGV[a + 3])
  local rd = tonumber(ARGV[a + 3])
  if rd then
    -- a window set (perhaps made longer): the group's hand-outs already logged count in it
    local log = KEYS[3] .. 'group-rate:' .. group
    keepLog(log, rd)
    if redis.call('EXISTS', log) == 1 then
      noteGroupLog(KEYS[3], group, nowMs() + rd)
      trimGroupLogs(KEYS[3], nowMs())
    end
  end
  if next(stored) == nil then
    redis.call('HDEL', KEYS[1], group)
  else
    redis.call('HSET', KEYS[1], group, cjson.encode(stored))
  end
end
local n = redis.call('HLEN', KEYS[1])
redis.call('HSET', KEYS[2], 'goverrides', n)
return n
