--[[ schedule-admin
  Change the schedule registry at run time: put (add or replace a runtime schedule), delete,
  pause or resume. Every change bumps the registry version so the leader reloads.
  KEYS[1]  <ns>:{<ns>:sched}:schedules  HASH    name -> definition JSON
  KEYS[2]  <ns>:{<ns>:sched}:version    STRING  counter
  ARGV[1]  op                           "put" | "delete" | "pause" | "resume"
  ARGV[2]  name                         string
  ARGV[3]  definition JSON              string  (op "put" only)
  Returns  {code, redisNowMs} (codes: protocol.ts ADMIN_RESULT): 1 done | 0 notFound (no such schedule)
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
redis.call('INCR', KEYS[2])
return {1, now}
