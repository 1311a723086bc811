--[[ settle-due
  After forward.lua ran on the queues claim-due.lua claimed: put each queue back in the due-time index
  at its next due time, or take it out when it has nothing waiting — unless an enqueuer wrote a new due
  time meanwhile (its score is no longer this round's claim mark; then it stays, at the lower time).
  KEYS[1]  <ns>:{<ns>:global}:due  ZSET    queue name -> earliest due time (epoch ms) or a claim mark
  ARGV[1]  mark                    integer the claim mark claim-due.lua returned
  ARGV[2..] pairs                  string, integer queue name, its next due time (epoch ms; -1: none waiting, protocol.ts NONE_DUE)
  Returns  number of queues taken out of the index
]]
local removed = 0
local mark = tonumber(ARGV[1])
for i = 2, #ARGV - 1, 2 do
  local q, nextDue = ARGV[i], tonumber(ARGV[i + 1])
  if nextDue >= 0 then
    redis.call('ZADD', KEYS[1], 'LT', nextDue, q)
  elseif tonumber(redis.call('ZSCORE', KEYS[1], q)) == mark then
    redis.call('ZREM', KEYS[1], q)
    removed = removed + 1
  end
end
return removed
