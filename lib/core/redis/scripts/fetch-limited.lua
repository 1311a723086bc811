--[[ fetch-limited
  Hand tasks of a queue that has fleet-wide limits or groups to one consumer, no more than the limits
  allow, decided here, in the one script that reads them (no task is handed out over a limit, and two
  workers never both take the last slot). The slots of the `concurrency` limit are the group's
  pending entries: a task holds one from its fetch until its entry leaves the pending entries list
  (ack, retry, dead, cancel, reclaim by liveness or after the visibility timeout). The `rate` limit
  is a sliding log of the tasks handed out in the last rateMs by Redis time (at most rateMax in any
  window of rateMs). Without a limit in KEYS[2] and without groups it is a plain read.
  A grouped queue (the `groups` snippet) is served in two steps: first the entries waiting in the
  stream, in order: an ungrouped task is handed out, a grouped one (a retry, a delayed task, a
  trigger, a reclaimed or given-back task: they come back through the stream) is moved to the end of
  its group (at most GROUPS.absorbMax per call); then, once nothing is left waiting in the stream,
  the groups round-robin: the group of the lowest turn gives its oldest task, which is appended to
  the stream and read at once (so it is the only entry the read returns), and moves a turn on. A
  grouped task holds a slot of its group (its entry id in <q>:group-running:<group>, freed by every
  exit path: the group-slots snippet) and, under a group rate, a place in the group's sliding log. A
  group at its `groupConcurrency` or `groupRate` (or its override in <q>:group-limits) leaves the
  round for <q>:groups-parked until the instant its rate allows a start, or until a slot of it is
  freed (its score becomes 0) or GROUPS.recheckMs passed (then its slots are checked against the
  pending entries list: a slot whose entry is no longer pending is dropped, so none is lost for good).
  A fetch carries a token (ARGV[5]); the entries it hands out are remembered under it for the consumer
  (<q>:handout:<consumer>: "<token> <entry id>…", HANDOUT_MEMORY.keepMs). The same fetch again (its reply
  was lost with its connection: ioredis sends it again on the new one, or the limiter repeats a fetch
  that failed) returns those entries that are still pending for the consumer and hands out nothing more,
  so a hand-out whose reply was lost neither keeps the limit's slots until the visibility timeout while
  nothing runs them, nor takes more.
  KEYS[1]  <ns>:{<ns>:<q>}:stream     STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:limits     HASH    concurrency, rateMax, rateMs (integers; absent = no limit);
                                              waitingUntil (epoch ms): a fetch was held back by concurrency lately;
                                              grouped (1: the queue has groups), gwaiting (tasks waiting in
                                              groups), gvt (the groups' virtual time: the highest turn served);
                                              groupConcurrency, groupRateMax, groupRateMs (every group's limits),
                                              goverrides (how many groups have their own, in <q>:group-limits)
  KEYS[3]  <ns>:{<ns>:<q>}:rate-log   ZSET    entry id -> when it was handed out (epoch ms, Redis time)
  KEYS[4]  <ns>:{<ns>:<q>}:           prefix  the queue's key prefix: its groups' keys are built on it
                                              (keys.ts QueueKeys group, groups, groups-idle, groups-waiting,
                                              groups-parked, group-signal, group-running, group-rate, group-limits,
                                              group-rate-logs, handout)
  ARGV[1]  group                      string  the consumer group
  ARGV[2]  consumer                   string  the fetching server
  ARGV[3]  count                      integer most entries wanted (the server's free slots)
  ARGV[4]  waitMarkMs                 integer ms  how long a held-back fetch marks the queue as waited on
  ARGV[5]  token                      string  this fetch's token ('' = none: nothing remembered)
  Returns  {{entries as XREADGROUP returns them for one stream}, state, waitMs, last-delivered-id, waited,
           signal-id}: states protocol.ts LIMIT_STATE: 0 open (nothing handed out: last-delivered-id and
           signal-id (the group signal's last entry: a new group wakes the wait) are where to block from;
           also when a limit is full but no task waits) |
           1 concurrency (every slot taken, tasks wait) | 2 rate (a slot frees in waitMs, tasks wait) | 3 groups (tasks wait
           only in groups held back by their limits; the next one is looked at in waitMs; block from
           last-delivered-id and signal-id too) |
           4 again (grouped entries were moved into their groups and more may wait: fetch again at once);
           waited = 1 while a fetch held back by concurrency is recent (a worker that frees a slot then
           announces it), else 0
]]
-- @include now-ms
-- @include task-entry
-- @include groups
-- @include group-slots
-- @include task-meta
-- @include rate-logs
local LIMIT_STATE = { open = 0, concurrency = 1, rate = 2, groups = 3, again = 4 } -- protocol.ts LIMIT_STATE
local HANDOUT_MEMORY = { keepMs = 300000 } -- protocol.ts HANDOUT_MEMORY
local group, consumer, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local stream, P = KEYS[1], KEYS[4]
local token = ARGV[5] or ''
local handoutKey = P .. 'handout:' .. consumer
local l = redis.call('HMGET', KEYS[2], 'concurrency', 'rateMax', 'rateMs', 'waitingUntil', 'grouped', 'gvt',
  'groupConcurrency', 'groupRateMax', 'groupRateMs', 'goverrides', 'gwaiting')
local conc, rmax, rms = tonumber(l[1]), tonumber(l[2]), tonumber(l[3])
local grouped = l[5] == '1'
local now = nowMs()
local waited = (tonumber(l[4]) or 0) > now and 1 or 0

-- this fetch ran before and its reply was lost: its entries again (those still pending for the consumer), nothing
-- more (none pending any more: a fetch as any other)
if token ~= '' then
  local last = redis.call('GET', handoutKey)
  if last and string.sub(last, 1, #token + 1) == token .. ' ' then
    local replay = {}
    for id in string.gmatch(string.sub(last, #token + 2), '%S+') do
      if #redis.call('XPENDING', stream, group, id, id, 1, consumer) > 0 then
        local e = redis.call('XRANGE', stream, id, id)[1]
        if e then replay[#replay + 1] = e end
      end
    end
    if #replay > 0 then return {replay, LIMIT_STATE.open, 0, '', waited, ''} end
  end
end

local function read(count)
  local res = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>')
  return res and res[1][2] or {}
end
local function lastDelivered()
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = {}
    for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
    if info['name'] == group then return info['last-delivered-id'] end
  end
  return '0-0'
end
local function signalId()
  local signal = redis.call('XREVRANGE', P .. 'group-signal', '+', '-', 'COUNT', 1)
  return signal[1] and signal[1][1] or '0-0'
end
-- a full limit holds nothing back while no task waits (none undelivered in the stream, none in a
-- group): the fetch is told open, to block until a task comes, not held back (queue.limited counts
-- only a wait that held tasks back, as the Inspector's limited state: trial 14)
local function nothingWaits(pending)
  return redis.call('XLEN', stream) - pending <= 0 and (tonumber(l[11]) or 0) <= 0
end
local function idle()
  return {{}, LIMIT_STATE.open, 0, lastDelivered(), waited, signalId()}
end

if conc then
  local pending = redis.call('XPENDING', stream, group)[1]
  local free = conc - pending
  if free <= 0 then
    if nothingWaits(pending) then return idle() end
    redis.call('HSET', KEYS[2], 'waitingUntil', now + tonumber(ARGV[4]))
    return {{}, LIMIT_STATE.concurrency, 0, '', 1, ''}
  end
  if free < n then n = free end
end
if rmax and rms then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - rms)
  local free = rmax - redis.call('ZCARD', KEYS[3])
  if free <= 0 then
    if nothingWaits(redis.call('XPENDING', stream, group)[1]) then return idle() end
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {{}, LIMIT_STATE.rate, tonumber(oldest[2]) + rms - now + 1, '', waited, ''}
  end
  if free < n then n = free end
end

local function handedOut(entries, state)
  if rmax and rms and #entries > 0 then
    for _, e in ipairs(entries) do redis.call('ZADD', KEYS[3], now, e[1]) end
    redis.call('PEXPIRE', KEYS[3], rms)
  end
  if token ~= '' and #entries > 0 then
    local ids = {}
    for i, e in ipairs(entries) do ids[i] = e[1] end
    redis.call('SET', handoutKey, token .. ' ' .. table.concat(ids, ' '), 'PX', HANDOUT_MEMORY.keepMs)
  end
  return {entries, state, 0, '', waited, ''}
end

if not grouped then
  local entries = read(n)
  -- the group signal too: the queue's first grouped task (enqueue-group.lua) ends the wait
  if #entries == 0 then return {{}, LIMIT_STATE.open, 0, lastDelivered(), waited, signalId()} end
  return handedOut(entries, LIMIT_STATE.open)
end

-- a grouped queue: first the stream, in order
local vt = tonumber(l[6]) -- nil before the first turn is served
local handed, absorbed, drained = {}, 0, false
-- the group of an entry (meta field g: protocol.ts META), nil for an ungrouped one
local function groupOf(fields)
  for i = 1, #fields, 2 do
    if fields[i] == 'meta' then
      local meta = fields[i + 1]
      if not string.find(meta, '"g":', 1, true) then return nil end
      local m = decodeMeta(meta)
      if m and type(m['g']) == 'string' and m['g'] ~= '' then return m['g'] end
      return nil
    end
  end
  return nil
end
while #handed < n and absorbed < GROUPS.absorbMax do
  local entries = read(n - #handed)
  if #entries == 0 then
    drained = true
    break
  end
  for _, e in ipairs(entries) do
    local g = e[2] and groupOf(e[2])
    if g then
      local f = {}
      for i = 1, #e[2], 2 do f[e[2][i]] = e[2][i + 1] end
      groupPush(P, g, cjson.encode({f['id'] or e[1], f['type'] or '', f['payload'] or '', f['meta']}), vt or 0)
      redis.call('XACK', stream, group, e[1])
      redis.call('XDEL', stream, e[1])
      absorbed = absorbed + 1
    else
      handed[#handed + 1] = e
    end
  end
end
if absorbed > 0 then redis.call('HINCRBY', KEYS[2], 'gwaiting', absorbed) end
if not drained then
  if #handed > 0 then return handedOut(handed, LIMIT_STATE.open) end
  return {{}, LIMIT_STATE.again, 0, '', waited, ''}
end

-- then the groups, round-robin by turn, each under its limits
local gconc, grmax, grms = tonumber(l[7]), tonumber(l[8]), tonumber(l[9])
local overrides = (tonumber(l[10]) or 0) > 0
-- a group's limits: the queue's, or its own override {c, rm, rd} (queue/limits.ts)
local function limitsOf(g)
  local c, rm, rd = gconc, grmax, grms
  if overrides then
    local o = redis.call('HGET', P .. 'group-limits', g)
    local ok, t = pcall(cjson.decode, o or '')
    if ok and type(t) == 'table' then
      if t['c'] then c = tonumber(t['c']) end
      if t['rm'] and t['rd'] then rm, rd = tonumber(t['rm']), tonumber(t['rd']) end
    end
  end
  return c, rm, rd
end
-- the slots of g still held: an entry that left the pending entries list unseen (deleted, lost) is dropped
local function liveSlots(g)
  local key = P .. 'group-running:' .. g
  for _, id in ipairs(redis.call('SMEMBERS', key)) do
    if #redis.call('XPENDING', stream, group, id, id, 1) == 0 then redis.call('SREM', key, id) end
  end
  return redis.call('SCARD', key)
end
-- nil when g may start a task now; else when to look at it again (epoch ms) and true when by concurrency
local function heldUntil(g, verify)
  local c, rm, rd = limitsOf(g)
  if c then
    local running = redis.call('SCARD', P .. 'group-running:' .. g)
    if running >= c and verify then running = liveSlots(g) end
    if running >= c then return now + GROUPS.recheckMs, true end
  end
  if rm and rd then
    local log = P .. 'group-rate:' .. g
    redis.call('ZREMRANGEBYSCORE', log, '-inf', now - rd)
    if redis.call('ZCARD', log) >= rm then
      local oldest = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
      return tonumber(oldest[2]) + rd + 1, false
    end
  end
  return nil, false
end
-- groups whose hold is over (their instant came, a slot of theirs was freed: score 0) go back in the round
local due = redis.call('ZRANGEBYSCORE', P .. 'groups-parked', '-inf', now, 'WITHSCORES', 'LIMIT', 0, 100)
for i = 1, #due, 2 do
  local g = due[i]
  local at = heldUntil(g, tonumber(due[i + 1]) > 0) -- a re-check, not a seen release: check the slots
  if at then
    redis.call('ZADD', P .. 'groups-parked', at, g)
  else
    groupUnpark(P, g, vt or 0)
  end
end
local picks, moved = 0, absorbed
local rated = false -- a group's log of hand-outs was written (rate-logs: listed as alive)
while #handed + picks < n do
  local head = redis.call('ZRANGE', P .. 'groups', 0, 0, 'WITHSCORES')
  if not head[1] then break end
  local g, turn = head[1], tonumber(head[2])
  local at = heldUntil(g, false)
  if at then
    groupPark(P, g, turn, at)
    moved = moved + 1
    if moved >= GROUPS.absorbMax then break end
  else
    local v = redis.call('LPOP', P .. 'group:' .. g)
    if not v then
      -- its list is gone (deleted by hand): nothing waits in it
      redis.call('ZREM', P .. 'groups', g)
      redis.call('ZREM', P .. 'groups-waiting', g)
    else
      local ok, t = pcall(cjson.decode, v)
      local id
      if ok and type(t) == 'table' and t[4] then
        id = addEntry(stream, t[1], t[2], t[3], t[4])
      else
        -- not a stored task: handed out as it is, for the worker to dead-letter with the decode error
        id = redis.call('XADD', stream, '*', 'payload', v)
      end
      redis.call('SADD', P .. 'group-running:' .. g, id)
      local _, rm, rd = limitsOf(g)
      if rm and rd then
        redis.call('ZADD', P .. 'group-rate:' .. g, now, id)
        redis.call('PEXPIRE', P .. 'group-rate:' .. g, rd)
        noteGroupLog(P, g, now + rd)
        rated = true
      end
      picks = picks + 1
      if not vt or turn > vt then vt = turn end
      groupServed(P, g, turn)
    end
  end
end
if rated then trimGroupLogs(P, now) end
if picks > 0 then
  redis.call('HINCRBY', KEYS[2], 'gwaiting', -picks)
  redis.call('HSET', KEYS[2], 'gvt', vt)
  groupTrim(P, vt)
  for _, e in ipairs(read(picks)) do handed[#handed + 1] = e end
end
if #handed > 0 then return handedOut(handed, LIMIT_STATE.open) end
if moved >= GROUPS.absorbMax then return {{}, LIMIT_STATE.again, 0, '', waited, ''} end
local next = redis.call('ZRANGE', P .. 'groups-parked', 0, 0, 'WITHSCORES')
if next[1] then
  -- tasks wait only in held-back groups: a worker that frees a slot announces it
  redis.call('HSET', KEYS[2], 'waitingUntil', now + tonumber(ARGV[4]))
  local waitMs = math.max(1, tonumber(next[2]) - now)
  return {{}, LIMIT_STATE.groups, waitMs, lastDelivered(), 1, signalId()}
end
return {{}, LIMIT_STATE.open, 0, lastDelivered(), waited, signalId()}
