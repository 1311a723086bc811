--[[ set-limits
  Change a queue's fleet-wide limits (fields of its limits hash) in one step, and tell whether the
  queue still has a limit, a group override or groups, so that it must stay in the namespace's
  `limited` set. With none left the hash is deleted (its bookkeeping too: waitingUntil) in the same
  step, so a limit that another change stores at the same time is never deleted with it (trial 28:
  a clear and a set at once lost the set, in 145 of 200 runs).
  KEYS[1]  <ns>:{<ns>:<q>}:limits  HASH    concurrency, rateMax, rateMs, groupConcurrency, groupRateMax,
                                           groupRateMs (integers; absent = no limit); goverrides (groups
                                           with an override); grouped (1: the queue has groups)
  KEYS[2]  <ns>:{<ns>:<q>}:rate-log ZSET   the rate's log of hand-outs: a `rateMs` set keeps it that long at least
  KEYS[3]  <ns>:{<ns>:<q>}:         prefix  the queue's key prefix: a `groupRateMs` set keeps every group's log
                                           (<q>:group-rate:<g>, listed in <q>:group-rate-logs) that long at least
  ARGV[1]  S                       integer number of fields to set
  ARGV[2..] S field, value pairs to set, then the fields to delete
  Returns  1 the queue has a limit, a group override or groups | 0 none (the hash was deleted)
]]
-- @include now-ms
-- @include rate-logs
local s = tonumber(ARGV[1])
if s > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 2, 1 + 2 * s)) end
-- a window set (perhaps made longer): the hand-outs already logged count in it, so their log lives that long
for i = 2, 2 * s, 2 do
  if ARGV[i] == 'rateMs' then keepLog(KEYS[2], tonumber(ARGV[i + 1])) end
  if ARGV[i] == 'groupRateMs' then keepGroupLogs(KEYS[3], tonumber(ARGV[i + 1]), nowMs()) end
end
if #ARGV > 1 + 2 * s then redis.call('HDEL', KEYS[1], unpack(ARGV, 2 + 2 * s, #ARGV)) end
local h = redis.call('HMGET', KEYS[1], 'concurrency', 'rateMax', 'groupConcurrency', 'groupRateMax', 'goverrides', 'grouped')
if h[1] or h[2] or h[3] or h[4] or (tonumber(h[5]) or 0) > 0 or h[6] == '1' then return 1 end
redis.call('DEL', KEYS[1])
return 0
