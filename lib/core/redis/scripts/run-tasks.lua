--[[ run-tasks
  Move scheduled or retry tasks into the stream now (an operator's "run now"), keeping their meta.
  Each task moves at most once (the ZREM decides), so repeating the call, or racing a forwarder, is
  safe; an id no longer in the set is skipped.
  KEYS[1]  <ns>:{<ns>:<q>}:stream           STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:scheduled|retry  ZSET    task id -> due (epoch ms)
  KEYS[3]  <ns>:{<ns>:<q>}:tasks            HASH    task id -> encoded task (task-entry storedTask: either form)
  ARGV[1..] task ids                         string  at most 500 per call
  Returns  {task ids moved}
]]
-- @include task-entry
local moved = {}
for i = 1, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[2], id) == 1 then
    local v = redis.call('HGET', KEYS[3], id)
    if v then
      addEntry(KEYS[1], storedTask(v, id))
      redis.call('HDEL', KEYS[3], id)
      moved[#moved + 1] = id
    end
  end
end
return moved
