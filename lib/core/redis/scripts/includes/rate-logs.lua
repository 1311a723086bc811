-- @snippet rate-logs: the sliding logs of a queue's rate limits (<q>:rate-log, and <q>:group-rate:<g> per
-- group: entry id -> when it was handed out, epoch ms by Redis time) expire a window after their last
-- hand-out. A window made longer must keep them that much longer: a log that expired after the old
-- window forgot hand-outs that count in the new one (up to twice the new limit in its window). The
-- group logs alive are listed in <q>:group-rate-logs (ZSET group -> when its log expires, epoch ms), so
-- a change of the queue's groupRate reaches them all, whatever the number of groups.
-- keepLog(key, ms) makes `key` live at least `ms` more (left alone when it has no expiry or is gone).
-- noteGroupLog(P, g, untilMs) lists group g's log as alive until untilMs.
-- trimGroupLogs(P, now) drops the groups whose logs expired and makes the list expire with its last one.
-- keepGroupLogs(P, ms, now) makes every alive group log live at least `ms` more.
local function keepLog(key, ms)
  local ttl = redis.call('PTTL', key)
  if ttl >= 0 and ttl < ms then redis.call('PEXPIRE', key, ms) end
end
local function noteGroupLog(P, g, untilMs)
  redis.call('ZADD', P .. 'group-rate-logs', 'GT', untilMs, g)
end
local function trimGroupLogs(P, now)
  local logs = P .. 'group-rate-logs'
  redis.call('ZREMRANGEBYSCORE', logs, '-inf', now)
  local last = redis.call('ZRANGE', logs, -1, -1, 'WITHSCORES')
  if last[1] then redis.call('PEXPIREAT', logs, last[2]) end
end
local function keepGroupLogs(P, ms, now)
  trimGroupLogs(P, now)
  for _, g in ipairs(redis.call('ZRANGE', P .. 'group-rate-logs', 0, -1)) do
    keepLog(P .. 'group-rate:' .. g, ms)
    noteGroupLog(P, g, now + ms)
  end
  trimGroupLogs(P, now)
end
