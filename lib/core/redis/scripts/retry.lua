--[[ retry
  Move a failed task from the stream to the retry set, due at retryAtMs. Its markers live until then
  and MARKER_TTL.waitingMs past it (the task is not held by a worker meanwhile).
  KEYS[1]   <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:retry         ZSET    task id -> retry-at (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:tasks         HASH    task id -> encoded task
  KEYS[4]   <ns>:{<ns>:<q>}:counts        STRING  the queue's counts (stats.lua)
  KEYS[5..] the task's markers (codec.ts markerKeys: uid, overlap, buffer keys, group slot), renewed if
            they still name this task (a buffer waiting behind it too); its group slot is freed (it waits
            in the retry set)
  ARGV[1]   group                         string
  ARGV[2]   entry id                      string  the stream entry being retried
  ARGV[3]   task id                       string
  ARGV[4]   encoded task                  string  JSON array [id, type, payload, meta] with the new meta (protocol.ts META)
  ARGV[5]   delayMs                       integer ms from now, by Redis server time
  ARGV[6]   counterTtlMs                  integer ms
  Returns   retry-at (epoch ms, Redis time) when moved | 0 the entry was no longer pending for this group
            (reclaimed elsewhere, or gone; nothing done: protocol.ts NOT_PENDING)
]]
-- @include now-ms
-- @include stats
-- @include markers
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
local delay = tonumber(ARGV[5])
local now = nowMs()
local retryAt = now + delay
redis.call('ZADD', KEYS[2], retryAt, ARGV[3])
holdMarkers(KEYS, 5, #KEYS, ARGV[3], delay + MARKER_TTL.waitingMs)
releaseGroupSlots(KEYS, 5, #KEYS, ARGV[2])
countStats(KEYS[4], STATS.failed, 1, now, ARGV[6])
return retryAt
