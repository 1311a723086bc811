--[[ mark-due
  Marks schedules of one shard "look at it now" in its due index (the `schedule-index` snippet's
  markDue), those the registry holds and that are not paused: a code-declared schedule declared
  again after it was orphaned (the leader took it out of the index), a migrated definition.
  KEYS[1]  <ns>:{<tag>}:schedules  HASH    schedule name -> definition JSON
  KEYS[2]  <ns>:{<tag>}:           prefix  the shard's key prefix (its due index)
  ARGV[1..] schedule names (of this shard)
  Returns  how many were marked
]]
-- @include now-ms
-- @include schedule-index
local now = nowMs()
local n = 0
if #ARGV == 0 then return 0 end
local defs = redis.call('HMGET', KEYS[1], unpack(ARGV))
for i, name in ipairs(ARGV) do
  -- an unescaped "paused":true is the top-level key (inside a string value its quotes are escaped)
  if defs[i] and not string.find(defs[i], '"paused":true', 1, true) then
    markDue(KEYS[2], name, now)
    n = n + 1
  end
end
return n
