-- @snippet dead-letter: the dead-letter set of a queue (why a task is dead: protocol.ts DEAD_REASON).
-- deadLetter(deadKey, deadTasksKey, countsKey, taskId, stored, failedAt, counterTtlMs, markers, stream, entryId)
--   stores the task (JSON array [id, type, payload, meta]) in <q>:dead-tasks, indexes it in <q>:dead by
--   failedAt (epoch ms), counts it as failed in the queue's counts (stats.lua) and releases its markers
--   (a list of its uid, overlap and buffer keys; each is deleted if it still names the task; a trigger
--   buffered behind it starts in stream, the queue's stream; the group slot entryId holds is freed).
-- trimDead(deadKey, deadTasksKey, now, maxDead, maxDeadAgeMs) removes the tasks dead for longer than
--   maxDeadAgeMs (ms, before now, epoch ms), then the oldest beyond maxDead tasks: at most 100 of each.
-- @include stats
-- @include markers
local function deadLetter(deadKey, deadTasksKey, countsKey, taskId, stored, failedAt, counterTtlMs, markers, stream, entryId)
  redis.call('HSET', deadTasksKey, taskId, stored)
  redis.call('ZADD', deadKey, failedAt, taskId)
  countStats(countsKey, STATS.failed, 1, failedAt, counterTtlMs)
  releaseMarkers(markers, 1, #markers, taskId, stream, entryId)
end
local function trimDead(deadKey, deadTasksKey, now, maxDead, maxDeadAgeMs)
  local old = redis.call('ZRANGEBYSCORE', deadKey, '-inf', now - tonumber(maxDeadAgeMs), 'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('HDEL', deadTasksKey, unpack(old))
    redis.call('ZREM', deadKey, unpack(old))
  end
  local over = redis.call('ZCARD', deadKey) - tonumber(maxDead)
  if over > 0 then
    local ids = redis.call('ZRANGE', deadKey, 0, math.min(over, 100) - 1)
    redis.call('HDEL', deadTasksKey, unpack(ids))
    redis.call('ZREM', deadKey, unpack(ids))
  end
end
