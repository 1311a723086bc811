-- @snippet counter: countToday(key, n, ttlMs) adds n to a day counter (processed or failed) and
-- gives it a lifetime of ttlMs (ms) when this call created it.
local function countToday(key, n, ttlMs)
  if redis.call('INCRBY', key, n) == n then redis.call('PEXPIRE', key, ttlMs) end
end
