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
-- each line split at its two spaces with plain finds (a pattern with character classes costs Redis
-- some 40 instructions per byte, callgrind): a name and a score read not empty, no third space
local n = 0
while pos <= #moves do
  local eol = string.find(moves, '\n', pos, true)
  local s1 = eol and string.find(moves, ' ', pos, true)
  local s2 = s1 and s1 < eol and string.find(moves, ' ', s1 + 1, true)
  if not s2 or s2 > eol or s1 == pos or s2 == s1 + 1 or (string.find(moves, ' ', s2 + 1, true) or eol) < eol then
    return redis.error_reply('ERR advance-due: malformed move at byte ' .. pos .. ': "' .. string.sub(moves, pos, pos + 80) .. '"')
  end
  n = n + 1
  names[n] = string.sub(moves, pos, s1 - 1)
  reads[n] = string.sub(moves, s1 + 1, s2 - 1)
  nexts[n] = string.sub(moves, s2 + 1, eol - 1)
  pos = eol + 1
end
local cur = redis.call('ZMSCORE', KEYS[1], unpack(names))
local add, rem = {}, {}
local moved = 0
for i = 1, #names do
  -- the same text as take-due.lua returned (both formatted by Redis), else compared as numbers (strtod is dear)
  if cur[i] and (cur[i] == reads[i] or tonumber(cur[i]) == tonumber(reads[i])) then
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
