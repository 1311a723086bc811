--[[ recover
  Reclaim stream entries idle in the pending entries list past the visibility timeout (XAUTOCLAIM,
  atomic: two recoverers never take the same entry) and put each back at the end of the stream as
  a new entry, counting the crash in its meta (crashes). A task reclaimed more than maxDeliveries
  times is poison: it goes to the dead-letter set with that reason. A crash is not a handler
  error: it does not use the retry budget. Entry fields: protocol.ts ENTRY_FIELDS; meta fields:
  protocol.ts META.
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
  ARGV[9]  cursor                        string  XAUTOCLAIM start id, "0-0" for a new scan (protocol.ts SCAN_START)
  Returns  {requeued, dead, {task ids requeued...}, {task ids dead...}, next cursor ("0-0" = scan done)}
]]
-- @include now-ms
-- @include dead-letter
local META = { crashes = 'c', lastError = 'le', failedAt = 'fa', deadReason = 'rs' } -- protocol.ts META
local DEAD_REASON = { poison = 'poison' } -- protocol.ts DEAD_REASON
local now = nowMs()
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
    local crashes = (tonumber(meta[META.crashes]) or 0) + 1
    meta[META.crashes] = crashes
    local taskId = f['id'] or entryId
    if crashes > tonumber(ARGV[5]) then
      meta[META.lastError] = 'poison: delivered ' .. crashes
        .. ' times without finishing (reclaimed after the visibility timeout each time)'
      meta[META.failedAt] = now
      meta[META.deadReason] = DEAD_REASON.poison
      local stored = cjson.encode({taskId, f['type'] or '', f['payload'] or '', cjson.encode(meta)})
      deadLetter(KEYS[2], KEYS[3], KEYS[4], taskId, stored, now, ARGV[8])
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
if #dead > 0 then trimDead(KEYS[2], KEYS[3], now, ARGV[6], ARGV[7]) end
return {#requeued, #dead, requeued, dead, res[1]}
