--[[ advance-due
  The end of a batch of a shard's tick (docs/scheduler-shards.md): each planned schedule's wake
  instant moves on, by compare-and-set: only when its score is still the one take-due.lua returned.
  A score that moved meanwhile is a registry change's mark ("look at it now"): it is left, and the
  schedule is planned again with its new definition.
  KEYS[1]  <ns>:{<tag>}:due  ZSET  schedule name -> wake instant (epoch ms)
  ARGV[1..] triples: name, the score read (as take-due.lua returned it), the new wake instant (epoch
           ms, an integer) or "" to take the schedule out of the index (ended, exhausted, orphaned,
           a definition that does not parse)
  Returns  how many scores had moved meanwhile (left as they were)
]]
local moved = 0
for a = 1, #ARGV, 3 do
  local cur = redis.call('ZSCORE', KEYS[1], ARGV[a])
  if cur and tonumber(cur) == tonumber(ARGV[a + 1]) then
    if ARGV[a + 2] == '' then
      redis.call('ZREM', KEYS[1], ARGV[a])
    else
      redis.call('ZADD', KEYS[1], ARGV[a + 2], ARGV[a])
    end
  else
    moved = moved + 1
  end
end
return moved
