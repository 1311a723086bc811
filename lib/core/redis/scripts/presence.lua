--[[ presence
  A worker server's presence tick (every liveness.ts tickMs from its main event loop): renew its
  own score in <ns>:live (now + staleAfterMs) and read the others. A server is overdue when its score
  has passed (its main loop has not ticked for staleAfterMs: stopped, hung, busy or dead); members
  overdue longer than keepMs are dropped. With judge = "1" (standalone Redis, Sentinel) it also
  reports which other servers have no subscriber on their liveness channel (PUBSUB NUMSUB, one call
  per 500): a process that is gone has its connections closed by the kernel, so Redis drops its
  subscription at once, while a stopped or busy process keeps it. With judge = "2" (Redis Cluster,
  Redis >= 7.0) the channels are shard channels (SSUBSCRIBE) and are counted with PUBSUB
  SHARDNUMSUB: a shard channel lives on the node that owns its slot, and every liveness channel
  carries the hash tag of KEYS[1], so this script runs on that very node and sees every subscriber.
  Redis time throughout.
  KEYS[1]  <ns>:{<ns>:global}:live       ZSET    server id -> expires-at (epoch ms)
  ARGV[1]  serverId                      string  the ticking server
  ARGV[2]  staleAfterMs                  integer ms
  ARGV[3]  keepMs                        integer ms
  ARGV[4]  judge                         "1" to read the liveness channels (NUMSUB), "2" the liveness
                                         shard channels (SHARDNUMSUB), else "0"
  ARGV[5]  channelPrefix                 string  <ns>:{<ns>:global}:alive: (+ server id = its channel)
  ARGV[6]  register                      "1" to write this server's own score, else "0" (shutting down)
  Returns  {redisNowMs, {ids of other servers without a subscriber}, {id, ms overdue, id, ms overdue, …} of the
           other servers overdue, subscribers of the ticking server's own channel (judge = "2" only, else 0),
           how many other servers are in <ns>:live (overdue ones within keepMs included),
           the microseconds of Redis time past redisNowMs (0–999: a sub-ms sample for the time source)}
]]
-- @include now-ms
local now, nowUs = nowMsUs()
local keep = tonumber(ARGV[3])
if ARGV[6] == '1' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
local rows = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local others, overdue, gone = {}, {}, {}
for i = 1, #rows, 2 do
  local id, expiresAt = rows[i], tonumber(rows[i + 1])
  if expiresAt < now - keep then gone[#gone + 1] = id
  elseif id ~= ARGV[1] then
    others[#others + 1] = id
    if expiresAt < now then
      overdue[#overdue + 1] = id
      overdue[#overdue + 1] = now - expiresAt
    end
  end
end
if #gone > 0 then redis.call('ZREM', KEYS[1], unpack(gone)) end
local silent, own = {}, 0
if ARGV[4] == '1' or ARGV[4] == '2' then
  local numsub = ARGV[4] == '2' and 'SHARDNUMSUB' or 'NUMSUB'
  -- its own subscription matters on a cluster only (a failover drops shard subscriptions: liveness.ts)
  if ARGV[4] == '2' then own = tonumber(redis.call('PUBSUB', numsub, ARGV[5] .. ARGV[1])[2]) end
  for i = 1, #others, 500 do
    local channels = {}
    for j = i, math.min(i + 499, #others) do channels[#channels + 1] = ARGV[5] .. others[j] end
    local counts = redis.call('PUBSUB', numsub, unpack(channels))
    for j = 2, #counts, 2 do
      if tonumber(counts[j]) == 0 then silent[#silent + 1] = others[i + j / 2 - 1] end
    end
  end
end
return {now, silent, overdue, own, #others, nowUs}
