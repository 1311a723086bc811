--[[ recover
  Reclaim stream entries idle in the pending entries list past the visibility timeout (XAUTOCLAIM,
  atomic: two recoverers never take the same entry) and put each back at the end of the stream as
  a new entry, counting the crash in its meta (`c`). A task reclaimed more than maxDeliveries
  times is poison: it goes to the dead-letter set with that reason. A crash is not a handler
  error: it does not use the retry budget.
  KEYS[1]  <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:dead          ZSET
  KEYS[3]  <ns>:{<ns>:<q>}:dead-tasks    HASH
  KEYS[4]  <ns>:{<ns>:<q>}:failed:<day>  STRING
  ARGV[1]  group                         string
  ARGV[2]  consumer                      string  the recovering server (owns nothing afterwards)
  ARGV[3]  minIdleMs                     integer ms (the visibility timeout)
  ARGV[4]  count                         integer most entries per call
  ARGV[5]  maxDeliveries                 integer reclaims before a task is poison
  ARGV[6]  maxDead                       integer dead-letter cap (count)
  ARGV[7]  maxDeadAgeMs                  integer dead-letter cap (age, ms)
  ARGV[8]  counterTtlMs                  integer ms
  ARGV[9]  cursor                        string  XAUTOCLAIM start id, "0-0" for a new scan
  Returns  {requeued, dead, {task ids requeued...}, {task ids dead...}, next cursor ("0-0" = scan done)}
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local group = ARGV[1]
local res = redis.call('XAUTOCLAIM', KEYS[1], group, ARGV[2], ARGV[3], ARGV[9], 'COUNT', ARGV[4])
local requeued, dead = {}, {}
for _, e in ipairs(res[2]) do
  local entryId, fields = e[1], e[2]
  if fields then
    local f = {}
    for i = 1, #fields, 2 do f[fields[i]] = fields[i + 1] end
    local ok, meta = pcall(cjson.decode, f['meta'] or '')
    if not ok or type(meta) ~= 'table' then meta = {} end
    meta['c'] = (tonumber(meta['c']) or 0) + 1
    local taskId = f['id'] or entryId
    if meta['c'] > tonumber(ARGV[5]) then
      meta['le'] = 'poison: delivered ' .. meta['c'] .. ' times without finishing (reclaimed after the visibility timeout each time)'
      meta['fa'] = now
      meta['rs'] = 'poison'
      redis.call('HSET', KEYS[3], taskId, cjson.encode({taskId, f['type'] or '', f['payload'] or '', cjson.encode(meta)}))
      redis.call('ZADD', KEYS[2], now, taskId)
      if redis.call('INCR', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[8]) end
      dead[#dead + 1] = taskId
    else
      local copy = {}
      for i = 1, #fields, 2 do
        copy[#copy + 1] = fields[i]
        if fields[i] == 'meta' then copy[#copy + 1] = cjson.encode(meta) else copy[#copy + 1] = fields[i + 1] end
      end
      if not f['meta'] then copy[#copy + 1] = 'meta'; copy[#copy + 1] = cjson.encode(meta) end
      redis.call('XADD', KEYS[1], '*', unpack(copy))
      requeued[#requeued + 1] = taskId
    end
  end
  redis.call('XACK', KEYS[1], group, entryId)
  redis.call('XDEL', KEYS[1], entryId)
end
if #dead > 0 then
  local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[7]), 'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('HDEL', KEYS[3], unpack(old))
    redis.call('ZREM', KEYS[2], unpack(old))
  end
  local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
  if over > 0 then
    local ids = redis.call('ZRANGE', KEYS[2], 0, math.min(over, 100) - 1)
    redis.call('HDEL', KEYS[3], unpack(ids))
    redis.call('ZREM', KEYS[2], unpack(ids))
  end
end
return {#requeued, #dead, requeued, dead, res[1]}
