--[[ retry-dead
  Put dead tasks back at the end of the stream with a fresh retry budget (retried 0, crashes 0; the
  last error is kept until the next one). Each task moves at most once (it must still be in the
  dead-letter set): safe to repeat. A task enqueued with an explicit id whose id is live again
  (another task took it meanwhile) stays dead and is returned as a conflict; a schedule's overlap
  marker is taken only when free.
  KEYS[1]   <ns>:{<ns>:<q>}:stream      STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:dead        ZSET    task id -> failed-at (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:dead-tasks  HASH    task id -> encoded task with its error
  KEYS[4..] per task, its uid key (meta u) then its overlap key (meta o), in the order ARGV lists the tasks
  ARGV[1..] per task: task id, n        its keys are the next n of KEYS[4..]
  Returns   {{task ids moved}, {task ids left dead: their explicit id is live again}}
]]
-- @include task-meta
local moved, conflicts = {}, {}
local k = 4
for a = 1, #ARGV, 2 do
  local id, n = ARGV[a], tonumber(ARGV[a + 1])
  local v = redis.call('HGET', KEYS[3], id)
  if v and redis.call('ZSCORE', KEYS[2], id) then
    local t = cjson.decode(v)
    local meta = decodeMeta(t[4]) or {}
    local j = k
    local uidKey, overlapKey
    if meta['u'] == 1 and j < k + n then uidKey = KEYS[j]; j = j + 1 end
    if meta['o'] == 1 and j < k + n then overlapKey = KEYS[j] end
    if uidKey and not redis.call('SET', uidKey, id, 'NX') then
      conflicts[#conflicts + 1] = id
    else
      redis.call('ZREM', KEYS[2], id)
      redis.call('HDEL', KEYS[3], id)
      if overlapKey and not redis.call('SET', overlapKey, id, 'NX') then meta['o'] = nil end
      meta['r'] = 0
      meta['c'] = nil
      meta['rs'] = nil
      redis.call('XADD', KEYS[1], '*', 'id', t[1], 'type', t[2], 'payload', t[3], 'meta', cjson.encode(meta))
      moved[#moved + 1] = id
    end
  end
  k = k + n
end
return {moved, conflicts}
