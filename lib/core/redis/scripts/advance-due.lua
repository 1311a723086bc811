--[[ advance-due
  The end of a batch of a shard's tick (docs/scheduler-shards.md): each planned schedule's wake
  instant moves on, by compare-and-set: only when its score is still the one take-due.lua returned.
  A score that moved meanwhile is a registry change's mark ("look at it now"): it is left, and the
  schedule is planned again with its new definition. One ZMSCORE, one ZADD and one ZREM for the
  whole batch.
  KEYS[1]  <ns>:{<tag>}:due  ZSET  schedule name -> wake instant (epoch ms)
  ARGV[1..] triples: name, the score read (as take-due.lua returned it), the new wake instant (epoch
           ms, an integer) or "" to take the schedule out of the index (ended, exhausted, orphaned,
           a definition that does not parse)
  Returns  how many scores had moved meanwhile (left as they were)
]]
if #ARGV == 0 then return 0 end
local names = {}
for a = 1, #ARGV, 3 do names[#names + 1] = ARGV[a] end
local cur = redis.call('ZMSCORE', KEYS[1], unpack(names))
local add, rem = {}, {}
local moved = 0
for i = 1, #names do
  local a = (i - 1) * 3 + 1
  if cur[i] and tonumber(cur[i]) == tonumber(ARGV[a + 1]) then
    if ARGV[a + 2] == '' then
      rem[#rem + 1] = names[i]
    else
      add[#add + 1] = ARGV[a + 2]
      add[#add + 1] = names[i]
    end
  else
    moved = moved + 1
  end
end
if #add > 0 then redis.call('ZADD', KEYS[1], unpack(add)) end
if #rem > 0 then redis.call('ZREM', KEYS[1], unpack(rem)) end
return moved
