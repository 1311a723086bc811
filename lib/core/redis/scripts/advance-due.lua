--[[ advance-due
  The end of a batch of a shard's tick (docs/scheduler-shards.md): each planned schedule's wake
  instant moves on, by compare-and-set: only when its score is still the one take-due.lua returned.
  A score that moved meanwhile is a registry change's mark ("look at it now"): it is left, and the
  schedule is planned again with its new definition. One ZMSCORE, one ZADD and one ZREM for the
  whole batch.
  KEYS[1]  <ns>:{<tag>}:due  ZSET  schedule name -> wake instant (epoch ms)
  ARGV[1]  the moves, one line each ending in "\n": "<name> <score read> <new wake instant>", the
           score as take-due.lua returned it, the new wake instant in epoch ms (an integer) or empty
           to take the schedule out of the index (ended, exhausted, orphaned, a definition that does
           not parse). One argument for the batch: a leader's client builds the text of each argument
           apart (a batch's 3 per schedule cost it more than the whole batch's line parsing costs here).
           Names and scores hold no space or newline (keys.ts isStoredName).
  Returns  how many scores had moved meanwhile (left as they were)
]]
local moves = ARGV[1] or ''
if moves == '' then return 0 end
local names, reads, nexts = {}, {}, {}
local pos = 1
while pos <= #moves do
  local _, last, name, read, nxt = string.find(moves, '^([^ \n]+) ([^ \n]+) ([^ \n]*)\n', pos)
  if not last then
    return redis.error_reply('ERR advance-due: malformed move at byte ' .. pos .. ': "' .. string.sub(moves, pos, pos + 80) .. '"')
  end
  names[#names + 1] = name
  reads[#reads + 1] = read
  nexts[#nexts + 1] = nxt
  pos = last + 1
end
local cur = redis.call('ZMSCORE', KEYS[1], unpack(names))
local add, rem = {}, {}
local moved = 0
for i = 1, #names do
  if cur[i] and tonumber(cur[i]) == tonumber(reads[i]) then
    if nexts[i] == '' then
      rem[#rem + 1] = names[i]
    else
      add[#add + 1] = nexts[i]
      add[#add + 1] = names[i]
    end
  else
    moved = moved + 1
  end
end
if #add > 0 then redis.call('ZADD', KEYS[1], unpack(add)) end
if #rem > 0 then redis.call('ZREM', KEYS[1], unpack(rem)) end
return moved
