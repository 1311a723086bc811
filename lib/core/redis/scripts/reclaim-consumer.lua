--[[ reclaim-consumer
  Reclaim at once, whatever their idle time, the pending entries of one consumer of the group: a
  worker server found dead by its liveness (its connection is gone from Redis), or this server's own
  previous process (same serverId) at start. Up to count entries of that consumer (XPENDING … <consumer>)
  are taken with XCLAIM … 0 (atomic: two recoverers never take the same entry) and handled exactly as
  recover.lua does: back to the end of the stream with their crash counted in meta (crashes), poison
  past maxDeliveries (left pending for the recovering consumer, to kill), remembered in <q>:reclaimed.
  A pending entry whose stream entry is gone (Redis >= 7.0: XCLAIM drops it from the PEL and does not
  return it; before: it comes back without fields) is lost: counted as lost in the queue's counts.
  Entry fields: protocol.ts ENTRY_FIELDS; meta fields: protocol.ts META.
  KEYS[1]  <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:reclaimed     ZSET    entry id -> when it was reclaimed (epoch ms)
  KEYS[3]  <ns>:{<ns>:<q>}:counts        STRING  the queue's counts (stats.lua)
  KEYS[4]  <ns>:{<ns>:<q>}:              prefix  the queue's key prefix: a requeued grouped task's group slot
                                                 (<q>:group-running:<group>) is freed
  ARGV[1]  group                         string
  ARGV[2]  consumer                      string  the recovering server (it holds the poison tasks afterwards)
  ARGV[3]  from                          string  the consumer whose entries are taken
  ARGV[4]  count                         integer most entries per call
  ARGV[5]  maxDeliveries                 integer reclaims before a task is poison
  ARGV[6]  counterTtlMs                  integer ms
  Returns  {{{task id, type, meta JSON} per task requeued}, {{entry id, stored task} per poison task, to
           kill}, {entry ids lost}, 1 when count entries were pending (call again) else 0}
]]
-- @include now-ms
-- @include stats
-- @include reclaim-entries
local group = ARGV[1]
local rows = redis.call('XPENDING', KEYS[1], group, '-', '+', tonumber(ARGV[4]), ARGV[3])
local requeued, poison, lost = {}, {}, {}
if #rows == 0 then return {requeued, poison, lost, 0} end
local ids = {}
for i, row in ipairs(rows) do ids[i] = row[1] end
local now = nowMs()
local entries = redis.call('XCLAIM', KEYS[1], group, ARGV[2], 0, unpack(ids))
local returned, claimed = {}, {}
for _, e in ipairs(entries) do
  if type(e) == 'table' then
    returned[e[1]] = true
    claimed[#claimed + 1] = e
  end
end
for _, id in ipairs(ids) do
  if not returned[id] then
    lost[#lost + 1] = id -- Redis >= 7.0 dropped it from the PEL (the XACK is for older versions)
    redis.call('XACK', KEYS[1], group, id)
  end
end
reclaimEntries(KEYS[1], KEYS[2], group, claimed, tonumber(ARGV[5]), now, requeued, poison, lost, KEYS[4])
if #lost > 0 then countStats(KEYS[3], STATS.lost, #lost, now, ARGV[6]) end
return {requeued, poison, lost, #rows >= tonumber(ARGV[4]) and 1 or 0}
