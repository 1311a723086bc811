--[[ index-schedules
  One bounded step of the backfill of the registry's indexes (the `schedule-index` snippet) from the
  registry itself, for a layout written without them (a rolling deploy: instances of a version
  before labels store definitions and do not index them). The state key holds the phase and the
  cursor, so any caller continues where the last stopped: `scan` indexes the definitions of HSCAN
  calls of 50 until ARGV[1] entries or 4 ms of Redis time (only the labels of a definition with labels
  are decoded), `prune` drops from the
  names index the names of one ZSCAN call that the registry no longer holds, then `ready`. A ready
  index whose size differs from the registry's (an old instance stored or deleted one since) starts
  over. The first step ever, when the index is already as large as the registry (written by this
  version from the start: nothing to backfill), marks it ready at once. A step costs ~ARGV[1] entries (a few ms at 250; a scan step stops at 4 ms).
  KEYS[1]  <ns>:{<ns>:sched}:schedules    HASH    name -> definition JSON
  KEYS[2]  <ns>:{<ns>:sched}:index:names  ZSET    every stored name, score 0
  KEYS[3]  <ns>:{<ns>:sched}:index:state  HASH    phase ("scan" | "prune" | "ready"), cursor
  KEYS[4]  <ns>:{<ns>:sched}:             prefix  the scheduler's key prefix (the label indexes)
  ARGV[1]  count                          integer most entries per step (ZSCAN COUNT; HSCAN calls of 50 up to it)
  Returns  {code, indexed}: code 1 ready (the indexes are complete) | 0 more steps are needed;
           indexed = the definitions indexed or names pruned by this step
]]
-- @include now-ms
-- @include schedule-index
local st = redis.call('HMGET', KEYS[3], 'phase', 'cursor')
local phase, cursor = st[1], st[2] or '0'
if not phase then
  -- no step ever ran: every writer of this version indexes what it stores, so an index as large as the
  -- registry was kept since the registry began (a layout of an older version has fewer names indexed)
  if redis.call('HLEN', KEYS[1]) == redis.call('ZCARD', KEYS[2]) then
    redis.call('HSET', KEYS[3], 'phase', 'ready')
    return {1, 0}
  end
  phase = 'scan'
end
if phase == 'ready' then
  if redis.call('HLEN', KEYS[1]) == redis.call('ZCARD', KEYS[2]) then return {1, 0} end
  phase, cursor = 'scan', '0'
end
local n = 0
if phase == 'scan' then
  -- HSCAN calls of up to 50 until ARGV[1] entries or 4 ms of this step (Redis time), whichever first
  local start = nowMs()
  local count = tonumber(ARGV[1])
  repeat
    local r = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', math.min(50, count))
    local flat = r[2]
    for i = 1, #flat, 2 do
      local raw = flat[i + 1]
      local def = nil
      -- only the labels object is decoded (an unescaped "labels": is the top-level key: inside a string its
      -- quotes are escaped); one that does not decode alone (a brace in a value) decodes with the whole
      if string.find(raw, '"labels":', 1, true) then
        local ok, labels = pcall(cjson.decode, string.match(raw, '"labels":(%b{})') or '')
        def = ok and type(labels) == 'table' and {labels = labels} or cjson.decode(raw)
      end
      if def and def['labels'] then
        scheduleIndexed(KEYS[4], flat[i], nil, def)
      else
        redis.call('ZADD', KEYS[2], 0, flat[i])
      end
      n = n + 1
    end
    cursor = r[1]
  until cursor == '0' or n >= count or nowMs() - start >= 4
  if cursor == '0' then phase = 'prune' end
else
  local r = redis.call('ZSCAN', KEYS[2], cursor, 'COUNT', ARGV[1])
  local flat = r[2]
  for i = 1, #flat, 2 do
    if redis.call('HEXISTS', KEYS[1], flat[i]) == 0 then
      redis.call('ZREM', KEYS[2], flat[i])
      n = n + 1
    end
  end
  cursor = r[1]
  if cursor == '0' then phase = 'ready' end
end
redis.call('HSET', KEYS[3], 'phase', phase, 'cursor', cursor)
return {phase == 'ready' and 1 or 0, n}
