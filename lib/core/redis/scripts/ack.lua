--[[ ack
  Acknowledge and delete the stream entries of tasks whose handler succeeded, and count them.
  KEYS[1]   <ns>:{<ns>:<q>}:stream          STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:processed:<day> STRING  counter of the UTC day
  KEYS[3..] per flagged task, its uid and/or overlap keys, in the order ARGV lists them
  ARGV[1]   group                           string
  ARGV[2]   counterTtlMs                    integer ms
  ARGV[3]   P: number of plain entry ids    integer
  ARGV[4 .. 3+P]  plain entry ids (no keys to release)
  then per flagged task: entry id, task id, n (its keys are the next n of KEYS[3..])
  Returns   number of entries acknowledged (ids this group no longer had pending count 0)
]]
-- @include counter
local group = ARGV[1]
local p = tonumber(ARGV[3])
local acked = 0
if p > 0 then
  local ids = {}
  for i = 1, p do ids[i] = ARGV[3 + i] end
  acked = redis.call('XACK', KEYS[1], group, unpack(ids))
  redis.call('XDEL', KEYS[1], unpack(ids))
end
local a = 4 + p
local k = 3
while a <= #ARGV do
  local entry, taskId, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  if redis.call('XACK', KEYS[1], group, entry) == 1 then
    acked = acked + 1
    redis.call('XDEL', KEYS[1], entry)
    for j = k, k + n - 1 do
      if redis.call('GET', KEYS[j]) == taskId then redis.call('DEL', KEYS[j]) end
    end
  end
  k = k + n
  a = a + 3
end
if acked > 0 then countToday(KEYS[2], acked, ARGV[2]) end
return acked
