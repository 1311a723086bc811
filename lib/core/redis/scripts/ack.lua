--[[ ack
  Acknowledge and delete the stream entries of tasks whose handler succeeded, count them, and
  release their markers. An entry the group no longer has pending was reclaimed by a recoverer (it
  is in <q>:reclaimed: the task runs again elsewhere, its markers stay) or is gone (deleted, trimmed,
  reported lost, FLUSHDB: nobody runs the task again, so its markers are released).
  KEYS[1]   <ns>:{<ns>:<q>}:stream          STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:counts          STRING  the queue's counts (stats.lua)
  KEYS[3]   <ns>:{<ns>:<q>}:reclaimed       ZSET    entry id -> when a recoverer took it (epoch ms)
  KEYS[4..] per flagged task, its markers (codec.ts markerKeys: uid, overlap, buffer keys, group slot), in the order
            ARGV lists them; a trigger buffered behind a task released here starts (overlap.lua)
  ARGV[1]   group                           string
  ARGV[2]   counterTtlMs                    integer ms
  ARGV[3]   nowMs                           integer epoch ms (the engine's Redis time): the minute counted
  ARGV[4]   P: number of plain entry ids    integer
  ARGV[5]   the P plain entry ids (no keys to release), space-separated ('' when P is 0): one argument
            instead of P (the client lays out and writes a few arguments per batch, not 50)
  ARGV[6..] per flagged task: entry id, task id, n (its keys are the next n of KEYS[4..])
  Returns   {acked, {entry ids reclaimed}, {entry ids gone}}: acked counts the entries XACK found pending. A
            plain entry deleted (XDEL) while pending is still pending on Redis 7.0 (XDEL leaves the PEL
            alone), so it is acked and counted, not listed as gone; one no longer pending is listed
]]
-- @include stats
-- @include markers
local group = ARGV[1]
local p = tonumber(ARGV[4])
local acked = 0
local reclaimed, gone = {}, {}
local function missing(entry)
  if redis.call('ZSCORE', KEYS[3], entry) then reclaimed[#reclaimed + 1] = entry else gone[#gone + 1] = entry end
end
if p > 0 then
  local ids = {}
  for id in string.gmatch(ARGV[5], '%S+') do ids[#ids + 1] = id end
  acked = redis.call('XACK', KEYS[1], group, unpack(ids))
  if acked < p then
    -- rare: find which; an entry that is not pending any more was deleted too (requeued, lost, FLUSHDB)
    for _, entry in ipairs(ids) do
      if not redis.call('XRANGE', KEYS[1], entry, entry)[1] then missing(entry) end
    end
  end
  redis.call('XDEL', KEYS[1], unpack(ids))
end
local a = 6
local k = 4
while a <= #ARGV do
  local entry, taskId, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  if redis.call('XACK', KEYS[1], group, entry) == 1 then
    acked = acked + 1
    redis.call('XDEL', KEYS[1], entry)
    releaseMarkers(KEYS, k, k + n - 1, taskId, KEYS[1], entry)
  else
    missing(entry)
    if gone[#gone] == entry then releaseMarkers(KEYS, k, k + n - 1, taskId, KEYS[1], entry) end
  end
  k = k + n
  a = a + 3
end
if acked > 0 then countStats(KEYS[2], STATS.processed, acked, tonumber(ARGV[3]), ARGV[2]) end
return {acked, reclaimed, gone}
