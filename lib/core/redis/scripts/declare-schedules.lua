--[[ declare-schedules
  Record which schedules an instance declares in code: its declaration key holds the digest of
  its names, and the set of those names (shared by every instance declaring the same ones) is
  kept under the digest. The caller filled the names into a building set first (plain SADD, in
  chunks); the first instance to finish renames it to the shared set, later ones drop theirs.
  Constant time (UNLINK frees a dropped set in the background). The names are declared before
  any definition is written (register-schedules.lua), so the leader never sees a new schedule
  undeclared.
  KEYS[1]  <ns>:{<ns>:sched}:instances                             ZSET    instance id -> last seen (epoch ms)
  KEYS[2]  <ns>:{<ns>:sched}:declaration:<instance>                STRING  digest of the names it declares
  KEYS[3]  <ns>:{<ns>:sched}:names:<digest>                        SET     the names of the digest (shared)
  KEYS[4]  <ns>:{<ns>:sched}:names-building:<digest>:<instance>    SET     the names, as filled by this instance
  ARGV[1]  instanceId                                              string
  ARGV[2]  declaredTtlMs                                           integer ms
  ARGV[3]  nowMs                                                   "" = Redis server time | a test clock's epoch ms
  ARGV[4]  digest                                                  "<count>.<sha1>" | "" (declares nothing)
  Returns  {code, nowMs} (codes: protocol.ts DECLARE_RESULT): 1 declared | 0 namesMissing (neither
           the shared nor the building set exists: fill the building set again and retry)
]]
-- @include now-ms
local now = tonumber(ARGV[3]) or nowMs()
local ttl = tonumber(ARGV[2])
if ARGV[4] == '' then
  redis.call('DEL', KEYS[2])
else
  if redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call('UNLINK', KEYS[4])
  elseif redis.call('EXISTS', KEYS[4]) == 1 then
    redis.call('RENAME', KEYS[4], KEYS[3])
  else
    return {0, now}
  end
  if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
  redis.call('SET', KEYS[2], ARGV[4], 'PX', ttl)
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
return {1, now}
