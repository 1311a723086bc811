--[[ redis-run
  Since when (Redis time) the running Redis process has been answering the worker servers of this
  namespace, as far as they know: a server that starts counts its reconnect grace from it
  (recovery/liveness.ts). Redis's own uptime does not say it: it counts from the process's start,
  the time it spent loading its data (AOF, RDB) included, in whole seconds. The record is written
  by the first server that starts under a new Redis process (a restart, a failover), and is read by
  those that start after it.
  - The same run id as recorded: its since.
  - Another run id (Redis restarted or failed over since the record): this server is the first to
    start under this process, whose servers may still be reconnecting; since = now.
  - No record (a new namespace; or Redis lost its data, and with it every pending entry): since =
    now - uptime, Redis's own start.
  KEYS[1]  <ns>:{<ns>:global}:redis-run  STRING  "<run id> <since, epoch ms>"
  ARGV[1]  runId                         string  the Redis process's run id (INFO server run_id)
  ARGV[2]  uptimeMs                      integer ms (INFO server uptime_in_seconds x 1000)
  Returns  {since (epoch ms), redisNowMs}
]]
-- @include now-ms
local now = nowMs()
local record = redis.call('GET', KEYS[1])
local since
if record then
  local run, at = string.match(record, '^(%S+) (%d+)$')
  if run == ARGV[1] then return {tonumber(at), now} end
  since = now
else
  since = now - tonumber(ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. since)
return {since, now}
