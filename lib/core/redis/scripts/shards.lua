--[[ shards
  One instance's call on the shard leases (docs/scheduler-shards.md), every TTL/2 and on a notice:
  renews its membership, drops expired members, and from the live members (sorted by id) takes its
  fair share: floor(count / n) shards, one more for the first `count mod n` members. It renews the
  shards it holds, releases those above its share, newest-taken first (announced on the resign
  channel, so the others take them at once), and takes free or expired ones while under its share, each with a new term
  (the rising counter: fencing). A call that makes it a member ("join": its first call, or one after
  its membership expired — a paused process woken, a partition healed) announces itself on the
  resign channel too, so the instances above their new share release at once instead of at their
  next call.
  KEYS[1]  <ns>:{<ns>:sched}:shards   HASH    shard -> "<instanceId>|<term>|<expiresAtMs>"
  KEYS[2]  <ns>:{<ns>:sched}:members  ZSET    instanceId -> expiresAt (epoch ms, Redis time)
  KEYS[3]  <ns>:{<ns>:sched}:term     STRING  rising counter (max(INCR, Redis ms)): the terms
  KEYS[4]  <ns>:{<ns>:sched}:lease-call:<instanceId>  STRING  "<incarnation>|<seq>" of this instance's newest
                                      call that ran (expires with the membership it wrote)
  ARGV[1]  instanceId                 string
  ARGV[2]  ttlMs                      integer ms: the lease of each shard and of the membership
  ARGV[3]  count                      integer: how many shards (protocol.ts SHARD_COUNT)
  ARGV[4]  channel                    <ns>:{<ns>:sched}:resign (a channel, not a key)
  ARGV[5]  join                       "1" on an instance's first call, else "0" (a call also joins when
                                      the instance is not a live member)
  ARGV[6]  standAside                 "1" when the instance cannot fire within its leases (its round
                                      trips to Redis are too long: leadership/shards.ts): while another
                                      live member campaigns, it releases every shard it holds (announced),
                                      takes none and leaves the members, so the others share every shard;
                                      with no other member it calls as usual (a slow leader beats none)
  ARGV[7]  incarnation                string naming this process's ShardLeases ("" = no fence: tests)
  ARGV[8]  seq                        integer, rising with each call of that incarnation
  A call whose seq is at or below the newest of the same incarnation that ran is stale: the instance
  gave up on it at its deadline and made a newer call, which ran first (a client re-sends queued calls
  after a failover in any order). It changes nothing and returns stale = 1: acting on it would
  undo the newer call (an older join after a newer standAside made the caller a member again).
  Returns  {redisNowMs, mine, taken, released, nextCheckMs, stale}: mine is a flat list of shard, term of
           every shard this instance leads after the call (taken ones included); taken and released
           list shard numbers; nextCheckMs is the earliest expiry of another member or another's
           shard (epoch ms; 0 when there is none): the instance calls again then; stale is 1 for a
           stale call (nothing else in the reply is meaningful), else 0
]]
-- @include now-ms
-- @include rising-counter
local now = nowMs()
local me, ttl, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local was = tonumber(redis.call('ZSCORE', KEYS[2], me))
local joins = ARGV[5] == '1' or not was or was <= now
local incarnation, seq = ARGV[7], tonumber(ARGV[8])
if incarnation ~= '' then
  local last = redis.call('GET', KEYS[4])
  local lastIncarnation, lastSeq = string.match(last or '', '^(.*)|(%d+)$')
  if lastIncarnation == incarnation and tonumber(lastSeq) >= seq then return {now, {}, {}, {}, 0, 1} end
end
-- the first write is a deny-oom one (ZADD): over maxmemory Redis refuses the call here with OOM, before it
-- writes anything, so the leader steps down as its leases run out (a deletion first, ZREMRANGEBYSCORE, would
-- let every later write through: redis-full.spec)
redis.call('ZADD', KEYS[2], now + ttl, me)
if incarnation ~= '' then redis.call('SET', KEYS[4], incarnation .. '|' .. seq, 'PX', ttl) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if ARGV[6] == '1' and redis.call('ZCARD', KEYS[2]) > 1 then
  -- stand aside: another live member takes what this one releases (it calls on the notice)
  redis.call('ZREM', KEYS[2], me)
  local entries = redis.call('HGETALL', KEYS[1])
  local released = {}
  for i = 1, #entries, 2 do
    local holder, _, expiresAt = string.match(entries[i + 1], '^(.*)|(%d+)|(%d+)$')
    if holder == me and tonumber(expiresAt) > now then
      redis.call('HDEL', KEYS[1], entries[i])
      released[#released + 1] = tonumber(entries[i])
    end
  end
  if #released > 0 then redis.call('PUBLISH', ARGV[4], me) end
  return {now, {}, {}, released, 0, 0}
end
local members = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
local ids = {}
local nextCheck = 0
for i = 1, #members, 2 do
  ids[#ids + 1] = members[i]
  local at = tonumber(members[i + 1])
  if members[i] ~= me and (nextCheck == 0 or at < nextCheck) then nextCheck = at end
end
table.sort(ids)
local rank = 0
for i, id in ipairs(ids) do
  if id == me then rank = i - 1 end
end
local n = #ids
local target = math.floor(count / n) + ((rank < count % n) and 1 or 0)
local mine, free = {}, {}
local entries = redis.call('HGETALL', KEYS[1])
local held = {}
for i = 1, #entries, 2 do held[tonumber(entries[i])] = entries[i + 1] end
for k = 0, count - 1 do
  local v = held[k]
  local holder, term, expiresAt
  if v then holder, term, expiresAt = string.match(v, '^(.*)|(%d+)|(%d+)$') end
  expiresAt = tonumber(expiresAt)
  if holder == me and expiresAt and expiresAt > now then
    mine[#mine + 1] = {k, term}
  elseif not expiresAt or expiresAt <= now then
    free[#free + 1] = k
  elseif nextCheck == 0 or expiresAt < nextCheck then
    nextCheck = expiresAt
  end
end
-- above the share, release the newest-taken first (highest term): after a blip (one member's leases
-- expired and another took them) each shard goes back to where it was, instead of swapping owners
table.sort(mine, function(a, b) return tonumber(a[2]) < tonumber(b[2]) end)
local released = {}
while #mine > target do
  local k = table.remove(mine)[1]
  redis.call('HDEL', KEYS[1], k)
  released[#released + 1] = k
end
local taken = {}
for _, k in ipairs(free) do
  if #mine >= target then break end
  local term = risingCounter(KEYS[3], now)
  mine[#mine + 1] = {k, term}
  taken[#taken + 1] = k
end
local flat = {}
for _, m in ipairs(mine) do
  redis.call('HSET', KEYS[1], m[1], me .. '|' .. m[2] .. '|' .. (now + ttl))
  flat[#flat + 1] = m[1]
  flat[#flat + 1] = tonumber(m[2])
end
if #released > 0 or joins then redis.call('PUBLISH', ARGV[4], me) end
return {now, flat, taken, released, nextCheck, 0}
