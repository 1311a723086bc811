--[[ register-schedules
  Publish the schedules an instance declares in code, and record that it declares them. A
  definition whose fingerprint (`fp`) changed replaces the stored one (the last writer wins); it
  keeps registeredAt, paused and resumedAt, and its changedAt becomes `now` when the spec, zone,
  offset or queue changed (a new spec takes effect when it is stored); a new one gets registeredAt
  and changedAt = `now`. Any change takes a new registry version (a rising counter: max(INCR,
  Redis time ms)), which is the changed schedules' new `generation`, and is announced on the
  changes channel so the leader reloads at once; the caller raises the generations in the
  previous queues' slots (fence-schedules.lua).
  KEYS[1]  <ns>:{<ns>:sched}:schedules            HASH    name -> definition JSON
  KEYS[2]  <ns>:{<ns>:sched}:version              STRING  rising counter
  KEYS[3]  <ns>:{<ns>:sched}:instances            ZSET    instance id -> last seen (epoch ms)
  KEYS[4]  <ns>:{<ns>:sched}:declared:<instance>  SET     names this instance declares
  ARGV[1]  instanceId                             string
  ARGV[2]  declaredTtlMs                          integer ms
  ARGV[3]  nowMs                                  "" = Redis server time (always, outside tests) | a test clock's epoch ms
  ARGV[4]  channel                                <ns>:{<ns>:sched}:changes (a channel, not a key)
  ARGV[5..] pairs: name, definition JSON (an object with at least `fp`)
  Returns  {changed definitions, redisNowMs, fences}: fences is a flat list of name, previous
           queue, generation for each changed definition that replaced a stored one
]]
-- @include now-ms
-- @include rising-counter
-- @include schedule-timing
local redisNow = nowMs()
local now = tonumber(ARGV[3]) or redisNow
local changed = {}
local fences = {}
redis.call('DEL', KEYS[4])
for a = 5, #ARGV, 2 do
  local name, def = ARGV[a], cjson.decode(ARGV[a + 1])
  local cur = redis.call('HGET', KEYS[1], name)
  local old = cur and cjson.decode(cur)
  if not old or old['fp'] ~= def['fp'] then
    carryOver(def, old, now)
    changed[#changed + 1] = {name, def, old}
  end
  redis.call('SADD', KEYS[4], name)
end
if #ARGV >= 5 then redis.call('PEXPIRE', KEYS[4], ARGV[2]) end
redis.call('ZADD', KEYS[3], now, ARGV[1])
if #changed > 0 then
  local generation = risingCounter(KEYS[2], redisNow)
  for _, c in ipairs(changed) do
    c[2]['generation'] = generation
    redis.call('HSET', KEYS[1], c[1], cjson.encode(c[2]))
    if c[3] then
      fences[#fences + 1] = c[1]
      fences[#fences + 1] = c[3]['queue']
      fences[#fences + 1] = generation
    end
  end
  redis.call('PUBLISH', ARGV[4], changed[1][1])
end
return {#changed, now, fences}
