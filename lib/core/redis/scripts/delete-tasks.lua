--[[ delete-tasks
  Delete tasks from a task set (scheduled, retry or dead) and release their uid/overlap keys when
  those still name them (a dead task released its keys when it died: none are passed for it).
  Each task goes at most once (the ZREM decides): safe to repeat.
  KEYS[1]   <ns>:{<ns>:<q>}:scheduled|retry|dead  ZSET    task id -> due / failed-at (epoch ms)
  KEYS[2]   <ns>:{<ns>:<q>}:tasks|dead-tasks      HASH    task id -> encoded task
  KEYS[3..] per task, its uid and/or overlap keys, in the order ARGV lists the tasks
  ARGV[1..] per task: task id, n                  its keys are the next n of KEYS[3..]
  Returns   {task ids deleted}
]]
-- @include markers
local deleted = {}
local k = 3
for a = 1, #ARGV, 2 do
  local id, n = ARGV[a], tonumber(ARGV[a + 1])
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    releaseMarkers(KEYS, k, k + n - 1, id)
    deleted[#deleted + 1] = id
  end
  k = k + n
end
return deleted
