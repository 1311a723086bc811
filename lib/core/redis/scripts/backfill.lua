--[[ backfill
  Enqueue triggers of a schedule in a past time range, each at most once ever by its dedup key
  <schedule>:<trigger-unix> (SET NX, the key fire.lua sets): a trigger that fired before, or was
  backfilled before, is not enqueued again. lastFired is left alone and the overlap policy does not
  apply (an operator asked for these triggers).
  KEYS[1]   <ns>:{<ns>:<q>}:stream  STREAM
  KEYS[2..] per trigger, its dedup key <ns>:{<ns>:<q>}:dedup:<schedule>:<trigger-unix>
  ARGV[1]   task type               string
  ARGV[2]   payload                 string  JSON text
  ARGV[3]   dedupTtlMs              integer ms
  ARGV[4..] per trigger: task id, meta (JSON text)
  Returns   {task ids enqueued}
]]
local added = {}
local k = 2
for a = 4, #ARGV, 2 do
  local id = ARGV[a]
  if redis.call('SET', KEYS[k], id, 'NX', 'PX', ARGV[3]) then
    redis.call('XADD', KEYS[1], '*', 'id', id, 'type', ARGV[1], 'payload', ARGV[2], 'meta', ARGV[a + 1])
    added[#added + 1] = id
  end
  k = k + 1
end
return added
