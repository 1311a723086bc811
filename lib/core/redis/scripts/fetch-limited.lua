--[[ fetch-limited
  Hand tasks of a queue that has fleet-wide limits to one consumer, no more than the limits allow,
  decided here, in the one script that reads them (no task is handed out over a limit, and two
  workers never both take the last slot). The slots of the `concurrency` limit are the group's
  pending entries: a task holds one from its fetch until its entry leaves the pending entries list
  (ack, retry, dead, cancel, reclaim by liveness or after the visibility timeout). The `rate` limit
  is a sliding log of the tasks handed out in the last rateMs by Redis time (at most rateMax in any
  window of rateMs). Without a limit in KEYS[2] it is a plain read.
  KEYS[1]  <ns>:{<ns>:<q>}:stream     STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:limits     HASH    concurrency, rateMax, rateMs (integers; absent = no limit);
                                              waitingUntil (epoch ms): a fetch was held back by concurrency lately
  KEYS[3]  <ns>:{<ns>:<q>}:rate-log   ZSET    entry id -> when it was handed out (epoch ms, Redis time)
  ARGV[1]  group                      string
  ARGV[2]  consumer                   string  the fetching server
  ARGV[3]  count                      integer most entries wanted (the server's free slots)
  ARGV[4]  waitMarkMs                 integer ms  how long a held-back fetch marks the queue as waited on
  Returns  {{entries as XREADGROUP returns them for one stream}, state, waitMs, last-delivered-id, waited}:
           state 0 = open (last-delivered-id set when no entry was waiting: block from there),
           1 = held back by concurrency (every slot taken), 2 = held back by rate (a slot frees in waitMs);
           waited = 1 while a fetch held back by concurrency is recent (a worker that frees a slot then
           announces it), else 0
]]
-- @include now-ms
local group, consumer, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local l = redis.call('HMGET', KEYS[2], 'concurrency', 'rateMax', 'rateMs', 'waitingUntil')
local conc, rmax, rms = tonumber(l[1]), tonumber(l[2]), tonumber(l[3])
local now = nowMs()
local waited = (tonumber(l[4]) or 0) > now and 1 or 0
if conc then
  local free = conc - redis.call('XPENDING', KEYS[1], group)[1]
  if free <= 0 then
    redis.call('HSET', KEYS[2], 'waitingUntil', now + tonumber(ARGV[4]))
    return {{}, 1, 0, '', 1}
  end
  if free < n then n = free end
end
if rmax and rms then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - rms)
  local free = rmax - redis.call('ZCARD', KEYS[3])
  if free <= 0 then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {{}, 2, tonumber(oldest[2]) + rms - now + 1, '', waited}
  end
  if free < n then n = free end
end
local res = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', n, 'STREAMS', KEYS[1], '>')
local entries = res and res[1][2] or {}
if #entries == 0 then
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    local info = {}
    for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
    if info['name'] == group then return {{}, 0, 0, info['last-delivered-id'], waited} end
  end
  return {{}, 0, 0, '0-0', waited}
end
if rmax and rms then
  for _, e in ipairs(entries) do redis.call('ZADD', KEYS[3], now, e[1]) end
  redis.call('PEXPIRE', KEYS[3], rms)
end
return {entries, 0, 0, '', waited}
