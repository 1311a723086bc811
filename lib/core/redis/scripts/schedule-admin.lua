--[[ schedule-admin
  Change the schedule registry at run time: put (add or replace a runtime schedule), delete,
  pause or resume. Every change bumps the registry version so the leader reloads.
  KEYS[1]   <ns>:{<ns>:sched}:schedules    HASH    name -> definition JSON
  KEYS[2]   <ns>:{<ns>:sched}:version      STRING  counter
  KEYS[3?]  <ns>:{<ns>:sched}:pause-notes  HASH    name -> JSON {note, actor, at}; when given, "pause"
            stores the operator's note there and "resume"/"delete" remove it (callers without it: unchanged)
  ARGV[1]   op                             "put" | "delete" | "pause" | "resume"
  ARGV[2]   name                           string
  ARGV[3]   definition JSON (op "put") | note (op "pause" with KEYS[3]; "" = none)
  ARGV[4]   actor                          string  (op "pause" with KEYS[3])
  Returns   {code, redisNowMs} (codes: protocol.ts ADMIN_RESULT): 1 done | 0 notFound (no such schedule)
]]
-- @include now-ms
local now = nowMs()
local op, name = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[1], name)
if op == 'put' then
  local def = cjson.decode(ARGV[3])
  if cur then
    local old = cjson.decode(cur)
    def['registeredAt'] = old['registeredAt']
    def['paused'] = old['paused']
  else
    def['registeredAt'] = now
  end
  redis.call('HSET', KEYS[1], name, cjson.encode(def))
elseif not cur then
  return {0, now}
elseif op == 'delete' then
  redis.call('HDEL', KEYS[1], name)
else
  local def = cjson.decode(cur)
  def['paused'] = (op == 'pause')
  redis.call('HSET', KEYS[1], name, cjson.encode(def))
end
if KEYS[3] and op ~= 'put' then
  if op == 'pause' then
    redis.call('HSET', KEYS[3], name, cjson.encode({note = ARGV[3] or '', actor = ARGV[4] or '', at = now}))
  else
    redis.call('HDEL', KEYS[3], name)
  end
end
redis.call('INCR', KEYS[2])
return {1, now}
