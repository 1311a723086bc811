--[[ register-schedules
  Publish the schedules an instance declares in code, and record that it declares them.
  A definition whose fingerprint (`fp`) changed replaces the stored one, keeping its
  `registeredAt` and `paused`; a new one gets `registeredAt` = Redis time. Any change bumps the
  registry version so the leader reloads.
  KEYS[1]  <ns>:{<ns>:sched}:schedules            HASH    name -> definition JSON
  KEYS[2]  <ns>:{<ns>:sched}:version              STRING  counter
  KEYS[3]  <ns>:{<ns>:sched}:instances            ZSET    instance id -> last seen (epoch ms)
  KEYS[4]  <ns>:{<ns>:sched}:declared:<instance>  SET     names this instance declares
  ARGV[1]  instanceId                             string
  ARGV[2]  declaredTtlMs                          integer ms
  ARGV[3]  nowMs                                  "" = Redis server time (always, outside tests) | a test clock's epoch ms
  ARGV[4..] pairs: name, definition JSON (an object with at least `fp`)
  Returns  {changed definitions, redisNowMs}
]]
-- @include now-ms
local now = tonumber(ARGV[3]) or nowMs()
local changed = 0
redis.call('DEL', KEYS[4])
for a = 4, #ARGV, 2 do
  local name, def = ARGV[a], cjson.decode(ARGV[a + 1])
  local cur = redis.call('HGET', KEYS[1], name)
  local old = cur and cjson.decode(cur)
  if not old or old['fp'] ~= def['fp'] then
    if old then
      def['registeredAt'] = old['registeredAt']
      def['paused'] = old['paused']
    else
      def['registeredAt'] = now
    end
    redis.call('HSET', KEYS[1], name, cjson.encode(def))
    changed = changed + 1
  end
  redis.call('SADD', KEYS[4], name)
end
if #ARGV >= 4 then redis.call('PEXPIRE', KEYS[4], ARGV[2]) end
redis.call('ZADD', KEYS[3], now, ARGV[1])
if changed > 0 then redis.call('INCR', KEYS[2]) end
return {changed, now}
