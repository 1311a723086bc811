--[[ take-due
  One batch of a shard's tick (docs/scheduler-shards.md): the schedules of the shard's due index
  whose wake instant has come, oldest first, with their definitions, and the next wake instant after
  them. Reads only: the leader moves each score on afterwards (advance-due.lua, compare-and-set on
  the score returned here).
  KEYS[1]  <ns>:{<tag>}:due        ZSET  schedule name -> wake instant (epoch ms)
  KEYS[2]  <ns>:{<tag>}:schedules  HASH  schedule name -> definition JSON
  ARGV[1]  upTo                    epoch ms: the wake instants at or before it are taken
  ARGV[2]  limit                   most schedules taken (protocol.ts SHARD_DUE.batch)
  Returns  {flat list of name, score (as stored, a string), definition JSON ("" when the registry
           holds none), then the first wake instant after upTo ("" when there is none)}
]]
local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
if #r > 0 then
  local names = {}
  for i = 1, #r, 2 do names[#names + 1] = r[i] end
  local defs = redis.call('HMGET', KEYS[2], unpack(names))
  for i, name in ipairs(names) do
    out[#out + 1] = name
    out[#out + 1] = r[2 * i]
    out[#out + 1] = defs[i] or ''
  end
end
local after = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
out[#out + 1] = after[2] or ''
return out
