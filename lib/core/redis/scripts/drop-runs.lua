--[[ drop-runs
  Delete the maxRuns counters a change left behind in one queue's slot (registry.ts dropStaleRuns:
  the schedule moved to another queue, or its new definition has no maxRuns), each only while no
  later change of the schedule was fenced there: its stored generation is still at most the one the
  change raised (fence-schedules.lua ran before this). A writer late with this step (paused between
  its registry write and its fence) so leaves alone the counter that a newer definition, with a
  maxRuns again, already counts its runs in.
  KEYS[1]   <ns>:{<ns>:<q>}:generation  HASH    schedule name -> generation
  KEYS[2]   <ns>:{<ns>:<q>}:            prefix  the queue's key prefix (runs:<schedule>: keys.ts QueueKeys)
  ARGV[1..] pairs: schedule name, the generation of the change (integer)
  Returns   how many counters were deleted
]]
local deleted = 0
for a = 1, #ARGV, 2 do
  local name, generation = ARGV[a], tonumber(ARGV[a + 1])
  if tonumber(redis.call('HGET', KEYS[1], name) or '0') <= generation then
    deleted = deleted + redis.call('DEL', KEYS[2] .. 'runs:' .. name)
  end
end
return deleted
