--[[ adopt-schedules
  One step of the migration of the registry of a version before shards (the scheduler's slot's
  `schedules` HASH, keys.ts SchedulerKeys.legacySchedules) into one shard (docs/scheduler-shards.md,
  "Compatibility"): each definition is stored unless the shard holds the name under a generation at
  least as new (a change made through the shards wins over an older copy); a stored one is indexed
  (the `schedule-index` snippet) and marked "look at it now" in the due index unless paused. The
  shard's version is raised to the newest adopted generation, so its next change takes a newer one.
  KEYS[1]  <ns>:{<tag>}:schedules  HASH    name -> definition JSON (the shard's)
  KEYS[2]  <ns>:{<tag>}:version    STRING  rising counter
  KEYS[3]  <ns>:{<tag>}:           prefix  the shard's key prefix (indexes, due index)
  ARGV[1..] pairs: name, definition JSON as the legacy registry holds it (names of this shard)
  Returns  {adopted, flat list of the names the shard now holds at least as new (the caller deletes
           them from the legacy registry when unchanged there: drop-legacy.lua)}
]]
-- @include now-ms
-- @include schedule-index
-- @include stored-form
local now = nowMs()
local adopted, settled = 0, {}
local newest = 0
for a = 1, #ARGV, 2 do
  local name, raw = ARGV[a], ARGV[a + 1]
  local ok, def = pcall(cjson.decode, raw)
  if ok and type(def) == 'table' then
    local gen = tonumber(storedGeneration(def)) or 0
    local cur = redis.call('HGET', KEYS[1], name)
    local old = cur and decodeStored(cur)
    if not old or (tonumber(storedGeneration(old)) or 0) < gen then
      scheduleIndexed(KEYS[3], name, old, def)
      redis.call('HSET', KEYS[1], name, raw)
      if def['paused'] == true then redis.call('ZREM', KEYS[3] .. 'due', name) else markDue(KEYS[3], name, now) end
      adopted = adopted + 1
      if gen > newest then newest = gen end
    end
    settled[#settled + 1] = name
  end
end
if newest > (tonumber(redis.call('GET', KEYS[2])) or 0) then redis.call('SET', KEYS[2], newest) end
return {adopted, settled}
