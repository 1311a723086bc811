--[[ enqueue-group
  Enqueue ready tasks of groups (enqueue option `group`, without a dedup key, an explicit id or a
  time): each goes to the end of its group's waiting list, not to the stream; fetch-limited.lua
  serves the groups round-robin. A group that had nothing waiting enters the round (the `groups`
  snippet: up to GROUPS.catchUp turns ahead of the groups already waiting), and the queue's group
  signal gets an entry so that a fetch blocked on the idle queue wakes. Marks the queue as grouped.
  KEYS[1]   <ns>:{<ns>:<q>}:limits        HASH    grouped := 1, gwaiting (tasks waiting in groups) += n; gvt read
  KEYS[2]   <ns>:{<ns>:<q>}:              prefix  the queue's key prefix: its groups' keys are built on it
                                                  (keys.ts QueueKeys group, groups, groups-idle, groups-waiting,
                                                  groups-parked, group-signal)
  ARGV[1..] per task 2 values: group, stored task (JSON array [id, type, payload, meta], fields: protocol.ts META)
  Returns   the number of tasks enqueued
]]
-- @include groups
local P = KEYS[2]
local vt = tonumber(redis.call('HGET', KEYS[1], 'gvt')) or 0
local n, entered = 0, false
for i = 1, #ARGV, 2 do
  if groupPush(P, ARGV[i], ARGV[i + 1], vt) then entered = true end
  n = n + 1
end
redis.call('HSET', KEYS[1], 'grouped', 1)
redis.call('HINCRBY', KEYS[1], 'gwaiting', n)
if entered then redis.call('XADD', P .. 'group-signal', 'MAXLEN', 1, '*', 's', 1) end
return n
