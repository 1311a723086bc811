--[[ remove-schedules
  Remove one chunk of schedules from the registry (the bulk runtime API sends about 125 names per
  call, pipelined, after its guard on schedules declared in code by a live instance; every name of
  a call is of one shard), with their entries in the shard's indexes and due index (the
  `schedule-index` snippet); the caller deletes their pause notes (the scheduler's slot). A chunk that removes any takes one new registry version (a rising counter:
  max(INCR, Redis time ms)), the generation the caller raises in each removed schedule's queue
  slot (fence-schedules.lua) before it announces the whole call once on the changes channel.
  KEYS[1]  <ns>:{<tag>}:schedules    HASH    name -> definition JSON (the shard's: keys.ts ShardKeys)
  KEYS[2]  <ns>:{<tag>}:version      STRING  rising counter
  KEYS[3]  <ns>:{<tag>}:             the shard's key prefix, for its indexes and due index (schedule-index)
  ARGV[1..] names
  Returns  {removed, redisNowMs, generation, fences, missing}: generation is the chunk's new one (0
           when nothing was removed); fences is a flat list of name, queue of each removed
           schedule; missing lists the names the registry did not hold
]]
-- @include now-ms
-- @include rising-counter
-- @include schedule-index
-- @include stored-form
local now = nowMs()
local found = {}
local missing = {}
if #ARGV == 0 then return {0, now, 0, {}, {}} end
-- one HMGET and one HDEL per hash for the chunk (a few hundred names: within Lua's stack for unpack)
local stored = redis.call('HMGET', KEYS[1], unpack(ARGV))
for a = 1, #ARGV do
  if stored[a] then found[#found + 1] = {ARGV[a], stored[a]} else missing[#missing + 1] = ARGV[a] end
end
local generation = 0
local fences = {}
if #found > 0 then
  generation = risingCounter(KEYS[2], now)
  local names = {}
  for _, f in ipairs(found) do
    local name, old = f[1], decodeStored(f[2])
    scheduleIndexed(KEYS[3], name, old, nil)
    names[#names + 1] = name
    fences[#fences + 1] = name
    fences[#fences + 1] = storedQueue(old)
  end
  redis.call('HDEL', KEYS[1], unpack(names))
  redis.call('ZREM', KEYS[3] .. 'due', unpack(names))
end
return {#found, now, generation, fences, missing}
