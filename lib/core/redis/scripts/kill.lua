--[[ kill
  Move a task to the dead-letter set (state `dead`) with its last error, and trim that set
  by age and by count (oldest first, at most 100 removals per call).
  KEYS[1]   <ns>:{<ns>:<q>}:stream        STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:dead          ZSET    task id -> failed-at (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:dead-tasks    HASH    task id -> encoded task with its error
  KEYS[4]   <ns>:{<ns>:<q>}:failed:<day>  STRING  counter of the UTC day
  KEYS[5..] the task's uid and/or overlap keys, deleted if they still name this task
  ARGV[1]   group                         string
  ARGV[2]   entry id                      string  "" when the task is not in the stream
  ARGV[3]   task id                       string
  ARGV[4]   encoded task                  string  JSON array [id, type, payload, meta]
  ARGV[5]   maxDead                       integer entries kept
  ARGV[6]   maxDeadAgeMs                  integer ms
  ARGV[7]   counterTtlMs                  integer ms
  Returns   failed-at (epoch ms, Redis time) when moved | 0 the entry was no longer pending for this group (nothing done)
]]
if ARGV[2] ~= '' then
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
  redis.call('XDEL', KEYS[1], ARGV[2])
end
local t = redis.call('TIME')
local failedAt = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[2], failedAt, ARGV[3])
if redis.call('INCR', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[7]) end
for j = 5, #KEYS do
  if redis.call('GET', KEYS[j]) == ARGV[3] then redis.call('DEL', KEYS[j]) end
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', failedAt - tonumber(ARGV[6]), 'LIMIT', 0, 100)
if #old > 0 then
  redis.call('HDEL', KEYS[3], unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  local ids = redis.call('ZRANGE', KEYS[2], 0, math.min(over, 100) - 1)
  redis.call('HDEL', KEYS[3], unpack(ids))
  redis.call('ZREM', KEYS[2], unpack(ids))
end
return failedAt
