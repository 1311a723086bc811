--[[ delete-tasks
  Delete tasks from a task set (scheduled, retry or dead) and release their markers when those
  still name them (a dead task released its keys when it died: none are passed for it); a trigger
  buffered behind a deleted task starts (overlap.lua). Each task goes at most once (the ZREM
  decides): safe to repeat.
  KEYS[1]   <ns>:{<ns>:<q>}:scheduled|retry|dead  ZSET    task id -> due / failed-at (epoch ms)
  KEYS[2]   <ns>:{<ns>:<q>}:tasks|dead-tasks      HASH    task id -> encoded task
  KEYS[3]   <ns>:{<ns>:<q>}:stream                STREAM  where a buffered trigger starts
  KEYS[4..] per task, its markers (codec.ts markerKeys: uid, overlap, buffer keys), in the order ARGV
            lists the tasks
  ARGV[1..] per task: task id, n                  its keys are the next n of KEYS[4..]
  Returns   {task ids deleted}
]]
-- @include markers
local deleted = {}
local k = 4
for a = 1, #ARGV, 2 do
  local id, n = ARGV[a], tonumber(ARGV[a + 1])
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    releaseMarkers(KEYS, k, k + n - 1, id, KEYS[3])
    deleted[#deleted + 1] = id
  end
  k = k + n
end
return deleted
