--[[ kill
  Move a task to the dead-letter set (state `dead`) with its last error, release its markers, and
  trim that set by age and by count (oldest first, at most 100 removals of each per call). The one
  dead path: handler errors, timeouts, no handler, undecodable entries and poison tasks (which the
  recovering consumer holds after recover.lua) all end here.
  KEYS[1]   <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:dead          ZSET    task id -> failed-at (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:dead-tasks    HASH    task id -> encoded task with its error
  KEYS[4]   <ns>:{<ns>:<q>}:counts        STRING  the queue's counts (stats.lua)
  KEYS[5..] the task's markers (codec.ts markerKeys: uid, overlap, buffer keys, group slot), deleted if
            they still name this task (its group slot freed); a trigger buffered behind it starts (overlap.lua)
  ARGV[1]   group                         string
  ARGV[2]   entry id                      string  "" when the task is not in the stream
  ARGV[3]   task id                       string
  ARGV[4]   encoded task                  string  JSON array [id, type, payload, meta] (fields: protocol.ts META)
  ARGV[5]   maxDead                       integer entries kept
  ARGV[6]   maxDeadAgeMs                  integer ms
  ARGV[7]   counterTtlMs                  integer ms
  Returns   failed-at (epoch ms, Redis time) when moved | 0 the entry was no longer pending for this
            group, nothing done (protocol.ts NOT_PENDING)
]]
-- @include now-ms
-- @include dead-letter
if ARGV[2] ~= '' then
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
  redis.call('XDEL', KEYS[1], ARGV[2])
end
local failedAt = nowMs()
local markers = {}
for j = 5, #KEYS do markers[#markers + 1] = KEYS[j] end
deadLetter(KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4], failedAt, ARGV[7], markers, KEYS[1], ARGV[2])
trimDead(KEYS[2], KEYS[3], failedAt, ARGV[5], ARGV[6])
return failedAt
