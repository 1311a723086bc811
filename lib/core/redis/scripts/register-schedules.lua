--[[ register-schedules
  Publish one chunk of the schedules an instance declares in code (the caller sends a few
  hundred per call, pipelined, after declare-schedules.lua recorded their names). A definition
  whose fingerprint (`fp`) changed replaces the stored one (the last writer wins); it keeps
  registeredAt, paused and resumedAt, and its changedAt becomes `now` when the spec, zone, offset,
  queue or bounds changed (a new spec takes effect when it is stored); a new one gets registeredAt and
  changedAt = `now`. A chunk with changes takes a new registry version (a rising counter:
  max(INCR, Redis time ms)), which is its changed schedules' new `generation`; the caller raises
  the generations in the previous queues' slots (fence-schedules.lua), then announces the change
  once on the changes channel so the leader reloads. A definition that changed only its labels (the
  `schedule-index` snippet's labelsOnly) is stored under its generation: it takes no version, is not
  counted as changed and needs no fence. The shard's indexes and due index follow every stored
  definition (the `schedule-index` snippet's scheduleIndexed and dueFollows). Every name of a call
  is of one shard. With `missingOnly` (an instance publishing again after the registry lost its
  declarations: registry.ts Declarations.heartbeat) only a definition not stored at all is written:
  a stored one, whoever registered it since this instance started (a newer version during a rolling
  deploy), is left as it is.
  KEYS[1]  <ns>:{<tag>}:schedules   HASH    name -> definition JSON (the shard's: keys.ts ShardKeys)
  KEYS[2]  <ns>:{<tag>}:version     STRING  rising counter
  KEYS[3]  <ns>:{<tag>}:            prefix  the shard's key prefix: its indexes and due index are
                                            built on it (the `schedule-index` snippet)
  ARGV[1]  nowMs                         "" = Redis server time (always, outside tests) | a test clock's epoch ms
  ARGV[2]  missingOnly                   "1" = write only the names not stored | "" = replace changed ones
  ARGV[3..] triples: name, fingerprint, definition JSON (an object whose `fp` is the fingerprint; in
           the compact form, stored in it: the `stored-form` snippet)
  Returns  {changed definitions, redisNowMs, fences}: fences is a flat list of name, previous
           queue, generation for each changed definition that replaced a stored one
]]
-- @include now-ms
-- @include rising-counter
-- @include schedule-timing
-- @include schedule-index
-- @include stored-form
local redisNow = nowMs()
local now = tonumber(ARGV[1]) or redisNow
local missingOnly = ARGV[2] == '1'
local changed = {}
local fences = {}
for a = 3, #ARGV, 3 do
  local name, fp = ARGV[a], ARGV[a + 1]
  local cur = redis.call('HGET', KEYS[1], name)
  -- unchanged (the usual case at a restart): the stored JSON holds this fingerprint as its top-level
  -- "fp" (inside a string value the quotes would be escaped), so it is not decoded
  -- under missingOnly a stored one is kept as it is, whatever its fingerprint
  if not (cur and (missingOnly or string.find(cur, '"fp":"' .. fp .. '"', 1, true))) then
    local old = cur and decodeStored(cur)
    if not old or old['fp'] ~= fp then
      local def = cjson.decode(ARGV[a + 2])
      carryOver(def, old, now)
      scheduleIndexed(KEYS[3], name, old, def)
      dueFollows(KEYS[3], name, old, def, redisNow)
      if labelsOnly(old, def) and storedGeneration(old) then
        def['generation'] = storedGeneration(old)
        redis.call('HSET', KEYS[1], name, encodeStored(def))
      else
        changed[#changed + 1] = {name, def, old}
      end
    end
  end
end
if #changed > 0 then
  local generation = risingCounter(KEYS[2], redisNow)
  for _, c in ipairs(changed) do
    c[2]['generation'] = generation
    redis.call('HSET', KEYS[1], c[1], encodeStored(c[2]))
    if c[3] then
      fences[#fences + 1] = c[1]
      fences[#fences + 1] = storedQueue(c[3])
      fences[#fences + 1] = generation
    end
  end
end
return {#changed, now, fences}
