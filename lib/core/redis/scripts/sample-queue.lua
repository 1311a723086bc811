--[[ sample-queue
  Sample a queue's depth (tasks waiting in the stream, not yet delivered: its length minus the
  group's pending entries; and in its groups, the limits hash's gwaiting, as the Inspector's pending) and latency (how long the oldest of them has waited, ms: from its entry
  id's time, or its trigger instant when later, as admin/latency.ts readyAt) into the current minute
  of its counts, and the largest of them into the current hour and day (layout: protocol.ts STATS).
  At most once per minute and queue: a call in a minute already sampled (by any server) does nothing
  more than one BITFIELD (that also rolls the counts to now, as any count would). Entry fields: protocol.ts ENTRY_FIELDS; meta fields: protocol.ts META.
  KEYS[1]  <ns>:{<ns>:<q>}:stream   STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:counts   STRING  the queue's counts (stats.lua)
  KEYS[3]  <ns>:{<ns>:<q>}:limits   HASH    gwaiting: tasks waiting in the queue's groups (fetch-limited.lua)
  ARGV[1]  group                    string
  ARGV[2]  counterTtlMs             integer ms (the counts key's lifetime, renewed once a day)
  Returns  {1, depth, latencyMs} when sampled | {0} the minute was sampled already
]]
-- @include now-ms
-- @include stats
local META = { triggerAt = 'tr' } -- protocol.ts META
local now = nowMs()
local minute = math.floor(now / 60000)
local b = rollStats(KEYS[2], now, ARGV[2], minute) -- the roll also stamps the sample (one BITFIELD)
local last = b.sampled
if last >= minute then
  if last > minute then redis.call('BITFIELD', KEYS[2], 'SET', 'u32', '#' .. STATS.stampSample, last) end
  return {0}
end
local length = redis.call('XLEN', KEYS[1])
local delivered, after = 0, '-'
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) == 'table' and not groups.err then
  for _, g in ipairs(groups) do
    local f = {}
    for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
    if f['name'] == ARGV[1] then
      delivered = tonumber(f['pending']) or 0
      after = '(' .. f['last-delivered-id']
    end
  end
end
local undelivered = math.max(0, length - delivered)
local depth = undelivered + math.max(0, tonumber(redis.call('HGET', KEYS[3], 'gwaiting')) or 0)
local latency = 0
if undelivered > 0 then
  local first = redis.call('XRANGE', KEYS[1], after, '+', 'COUNT', 1)[1]
  if first then
    local ready = tonumber(string.match(first[1], '^(%d+)'))
    local fields = first[2]
    for i = 1, #fields - 1, 2 do
      if fields[i] == 'meta' then
        local ok, meta = pcall(cjson.decode, fields[i + 1])
        if ok and type(meta) == 'table' and type(meta[META.triggerAt]) == 'number' then ready = math.max(ready, meta[META.triggerAt]) end
      end
    end
    latency = math.max(0, now - ready)
  end
end
local d, l = math.min(depth + 1, 4294967295), math.min(latency + 1, 4294967295)
-- the hour and day hold the largest sample: one BITFIELD reads them, one writes the minute and both
local r = statsRings
local slots = {}
for i = 2, 3 do
  slots[#slots + 1] = statsSlot(r[i], b[i], STATS.depth)
  slots[#slots + 1] = statsSlot(r[i], b[i], STATS.latency)
end
local cur = redis.call('BITFIELD', KEYS[2], 'GET', 'u32', slots[1], 'GET', 'u32', slots[2], 'GET', 'u32', slots[3], 'GET', 'u32', slots[4])
redis.call('BITFIELD', KEYS[2],
  'SET', 'u32', statsSlot(r[1], b[1], STATS.depth), d, 'SET', 'u32', statsSlot(r[1], b[1], STATS.latency), l,
  'SET', 'u32', slots[1], math.max(d, cur[1]), 'SET', 'u32', slots[2], math.max(l, cur[2]),
  'SET', 'u32', slots[3], math.max(d, cur[3]), 'SET', 'u32', slots[4], math.max(l, cur[4]))
return {1, depth, latency}
