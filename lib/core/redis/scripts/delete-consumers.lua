--[[ delete-consumers
  Delete consumers of the group that are gone: idle longer than idleMs and owning no pending entry,
  each checked and deleted in this one script. XGROUP DELCONSUMER drops the consumer's pending
  entries with it, so a check in one call and the delete in another (consumer.ts before: XINFO, then
  DELCONSUMER) lost the entries the consumer read in between — a worker resuming a queue paused for
  over an hour: its tasks left the pending entries list while they ran, and nothing would recover
  them if that worker died (review 46).
  KEYS[1]   <ns>:{<ns>:<q>}:stream  STREAM  consumer group ARGV[1]
  ARGV[1]   group                   string  the consumer group (keys.ts CONSUMER_GROUP)
  ARGV[2]   idleMs                  integer least idle time of a consumer to delete, ms
  ARGV[3..] names                   string  the consumers to delete if they still qualify
  Returns   the names deleted
]]
local idleMs = tonumber(ARGV[2])
local wanted = {}
for a = 3, #ARGV do wanted[ARGV[a]] = true end
local deleted = {}
for _, row in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #row - 1, 2 do info[row[i]] = row[i + 1] end
  if wanted[info['name']] and tonumber(info['pending']) == 0 and tonumber(info['idle']) > idleMs then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    deleted[#deleted + 1] = info['name']
  end
end
return deleted
