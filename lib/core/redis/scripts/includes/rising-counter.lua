-- @snippet rising-counter: risingCounter(key, nowMs) increments a counter that never decreases, even
-- when its key is lost (a FLUSHDB, a restart without persistence): the value is max(INCR, nowMs),
-- so a counter that starts again starts above every value it handed out before.
local function risingCounter(key, nowMs)
  local v = redis.call('INCR', key)
  if v < nowMs then
    v = nowMs
    redis.call('SET', key, v)
  end
  return v
end
