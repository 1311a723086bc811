-- @snippet groups: the groups of a queue (enqueue option `group`), on the queue's key prefix P (keys.ts
-- QueueKeys): P..'group:'..g LIST of g's waiting tasks (stored form, oldest first); P..'groups' ZSET the
-- round: group -> its next turn, lowest served first; P..'groups-idle' ZSET group -> its next turn
-- while it is out of the round; P..'groups-waiting' ZSET group -> tasks waiting; P..'groups-parked' ZSET
-- group -> when to look at it again (held back by a limit). A turn is a virtual time (start-time fair
-- queuing): serving a group moves it one turn on; vt is the highest turn served in the queue so far.
-- groupEnter(P, g, vt) puts g in the round at its remembered turn, or GROUPS.catchUp turns before vt
--   when that is later (a group back from idle may run that far ahead of the backlog, no further).
-- groupPush(P, g, stored, vt) appends a task to g; returns true when g entered the round.
-- groupServed(P, g, turn) records that g's task of turn `turn` was handed out: g stays in the round a
--   turn later while tasks wait in it, else leaves it with its next turn remembered.
-- groupPark(P, g, turn, at) takes g out of the round until `at` (epoch ms), its turn remembered.
-- groupUnpark(P, g, vt) ends g's hold: back in the round when tasks wait in it.
-- groupTrim(P, vt) forgets remembered turns too old to matter (before vt - GROUPS.catchUp), then the
--   lowest past GROUPS.idleMax groups (a forgotten group re-enters at the floor, as a new one does).
local GROUPS = { catchUp = 10, absorbMax = 1000, recheckMs = 5000, idleMax = 10000 } -- protocol.ts GROUPS
local function groupEnter(P, g, vt)
  local turn = tonumber(redis.call('ZSCORE', P .. 'groups-idle', g))
  if turn then redis.call('ZREM', P .. 'groups-idle', g) end
  local floor = vt - GROUPS.catchUp
  if not turn or turn < floor then turn = floor end
  redis.call('ZADD', P .. 'groups', turn, g)
end
local function groupPush(P, g, stored, vt)
  redis.call('RPUSH', P .. 'group:' .. g, stored)
  if tonumber(redis.call('ZINCRBY', P .. 'groups-waiting', 1, g)) ~= 1 then return false end
  if redis.call('ZSCORE', P .. 'groups-parked', g) then return false end
  groupEnter(P, g, vt)
  return true
end
local function groupServed(P, g, turn)
  if tonumber(redis.call('ZINCRBY', P .. 'groups-waiting', -1, g)) > 0 then
    redis.call('ZADD', P .. 'groups', turn + 1, g)
  else
    redis.call('ZREM', P .. 'groups-waiting', g)
    redis.call('ZREM', P .. 'groups', g)
    redis.call('ZADD', P .. 'groups-idle', turn + 1, g)
  end
end
local function groupPark(P, g, turn, at)
  redis.call('ZREM', P .. 'groups', g)
  redis.call('ZADD', P .. 'groups-idle', turn, g)
  redis.call('ZADD', P .. 'groups-parked', at, g)
end
local function groupUnpark(P, g, vt)
  redis.call('ZREM', P .. 'groups-parked', g)
  if redis.call('ZSCORE', P .. 'groups-waiting', g) then groupEnter(P, g, vt) end
end
local function groupTrim(P, vt)
  redis.call('ZREMRANGEBYSCORE', P .. 'groups-idle', '-inf', '(' .. (vt - GROUPS.catchUp))
  -- bounded whatever the turns: groups that each get one task never move vt, so none falls below the floor
  local over = redis.call('ZCARD', P .. 'groups-idle') - GROUPS.idleMax
  if over > 0 then redis.call('ZREMRANGEBYRANK', P .. 'groups-idle', 0, over - 1) end
end
