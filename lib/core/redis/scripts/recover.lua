--[[ recover
  Reclaim stream entries idle in the pending entries list past the visibility timeout (XAUTOCLAIM,
  atomic: two recoverers never take the same entry). A task reclaimed at most maxDeliveries times
  goes back to the end of the stream as a new entry, its crash counted in its meta (crashes); a
  crash is not a handler error: it does not use the retry budget. A task reclaimed more often is
  poison: it stays pending for the recovering consumer, which moves it to dead with kill.lua (the one
  dead path, which releases its markers). Both are remembered in <q>:reclaimed (bounded: protocol.ts
  RECLAIMED_MEMORY), so that a late ack of the old owner is told apart from a lost entry. A pending
  entry whose stream entry is gone (XDEL, a trim, eviction: XAUTOCLAIM's third element from Redis 7.0,
  an entry without fields before) is lost: counted as lost in the queue's counts and returned. Entry
  fields: protocol.ts ENTRY_FIELDS; meta fields: protocol.ts META. Entries the recovering consumer
  itself holds live (keep: in its slot table, running or waiting) are left to it: XAUTOCLAIM claimed
  them to it, which resets their idle time, and they stay pending for it. Their idle time passed the
  timeout only because that consumer's process stalled (its claims round is due at the same moment as
  this sweep); before, its own sweep put its running task back and it ran the task again.
  A call that Redis runs more than maxLateMs after it was sent (sentAtMs, the sender's estimate of
  Redis time, never ahead of it) takes nothing and says how late it ran: it waited behind a stalled
  Redis (SIGSTOP, a long fork, a VM pause) or a stalled link, and so may have the claim renewals of
  live holders, sent during the stall, queued behind it; their entries' idle time counts the stall.
  KEYS[1]  <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:reclaimed     ZSET    entry id -> when it was reclaimed (epoch ms)
  KEYS[3]  <ns>:{<ns>:<q>}:counts        STRING  the queue's counts (stats.lua)
  KEYS[4]  <ns>:{<ns>:<q>}:              prefix  the queue's key prefix: a requeued grouped task's group slot
                                                 (<q>:group-running:<group>) is freed
  ARGV[1]  group                         string
  ARGV[2]  consumer                      string  the recovering server (it holds the poison tasks afterwards)
  ARGV[3]  minIdleMs                     integer ms (the visibility timeout)
  ARGV[4]  count                         integer most entries per call
  ARGV[5]  maxDeliveries                 integer reclaims before a task is poison
  ARGV[6]  counterTtlMs                  integer ms
  ARGV[7]  cursor                        string  XAUTOCLAIM start id, "0-0" for a new scan (protocol.ts SCAN_START)
  ARGV[8]  sentAtMs                      integer epoch ms: Redis time (the sender's estimate) when the call was sent;
                                                 0 = no lateness check
  ARGV[9]  maxLateMs                     integer ms: a call run later than sentAtMs + maxLateMs takes nothing
  ARGV[10..] keep                        entry ids the recovering consumer holds live: left pending for it
  Returns  {{{task id, type, meta JSON} per task requeued}, {{entry id, stored task} per poison task, to
           kill}, {entry ids lost}, next cursor ("0-0" = scan done), lateMs (0 = it ran; > 0: it ran that
           many ms after sentAtMs, past maxLateMs, took nothing, and the cursor is ARGV[7])}
]]
-- @include now-ms
-- @include stats
-- @include reclaim-entries
local group = ARGV[1]
local requeued, poison, lost = {}, {}, {}
local now
local sentAt = tonumber(ARGV[8])
if sentAt > 0 then
  now = nowMs()
  local late = now - sentAt
  if late > tonumber(ARGV[9]) then return {requeued, poison, lost, ARGV[7], late} end
end
local res = redis.call('XAUTOCLAIM', KEYS[1], group, ARGV[2], ARGV[3], ARGV[7], 'COUNT', ARGV[4])
for _, id in ipairs(res[3] or {}) do lost[#lost + 1] = id end
local taken = res[2]
if #ARGV > 9 and #taken > 0 then
  local keep = {}
  for i = 10, #ARGV do keep[ARGV[i]] = true end
  taken = {}
  for _, e in ipairs(res[2]) do
    if not keep[e[1]] then taken[#taken + 1] = e end
  end
end
if #taken == 0 and #lost == 0 then return {requeued, poison, lost, res[1], 0} end -- the idle sweep: one XAUTOCLAIM
now = now or nowMs()
reclaimEntries(KEYS[1], KEYS[2], group, taken, tonumber(ARGV[5]), now, requeued, poison, lost, KEYS[4])
if #lost > 0 then countStats(KEYS[3], STATS.lost, #lost, now, ARGV[6]) end
return {requeued, poison, lost, res[1], 0}
