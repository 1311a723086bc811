--[[ lower-due
  Write the earliest due time of a queue's delayed or retry tasks into the due-time index (never
  raising a score: `ZADD LT`), and when that lowered the queue's score (or added it), publish the new
  due time on the index's wake channel: the worker servers of the queue re-arm their forward timer to
  it at once instead of learning of it at their next poll. At most one message per queue lowered;
  none when the index already held an earlier time (the servers are armed for that one already).
  Classic PUBLISH: on a Redis Cluster it reaches the subscribers of every node (the cluster bus).
  KEYS[1]  <ns>:{<ns>:global}:due  ZSET    queue name -> earliest due time (epoch ms) or a claim mark
  ARGV[1]  channel                 string  the wake channel (keys.ts GlobalKeys.dueWake)
  ARGV[2..] pairs                  integer, string  due time (epoch ms), queue name
  Returns  number of queues whose score was lowered or added (and published)
]]
local lowered = 0
for i = 2, #ARGV - 1, 2 do
  if redis.call('ZADD', KEYS[1], 'LT', 'CH', ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('PUBLISH', ARGV[1], ARGV[i] .. ':' .. ARGV[i + 1])
    lowered = lowered + 1
  end
end
return lowered
