--[[ page-tasks
  Read one page of a task set (scheduled, retry or dead) in score order (due or failed-at time)
  from a cursor, with each task's stored form: O(log N + limit), plus the tasks tied at the
  cursor's score when the cursor's own task left the set meanwhile (at most 10000 looked at).
  KEYS[1]  <ns>:{<ns>:<q>}:scheduled|retry|dead  ZSET    task id -> due / failed-at (epoch ms)
  KEYS[2]  <ns>:{<ns>:<q>}:tasks|dead-tasks      HASH    task id -> encoded task
  ARGV[1]  after id                              string  last task of the previous page; "" = from the start
  ARGV[2]  after score                           number  its score (used when it left the set)
  ARGV[3]  limit                                 integer most tasks returned (<= 1000)
  Returns  flat {id, score, encoded task ("" when the hash has none), id, score, ...}
]]
local limit = math.min(tonumber(ARGV[3]), 1000)
local start = 0
if ARGV[1] ~= '' then
  local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
  if rank then
    start = rank + 1
  else
    start = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[2])
    local tied = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2], 'LIMIT', 0, 10000)
    for _, id in ipairs(tied) do
      if id < ARGV[1] then start = start + 1 else break end
    end
  end
end
local rows = redis.call('ZRANGE', KEYS[1], start, start + limit - 1, 'WITHSCORES')
local out = {}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], rows[i]) or ''
end
return out
