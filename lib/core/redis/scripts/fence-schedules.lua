--[[ fence-schedules
  Raise the generation of schedules in one queue's slot, beside their lastFired, so that fire.lua
  refuses a trigger planned under an older state of them (before a pause, a removal, a new spec).
  Run by the admin calls after the registry change; never lowers a generation.
  KEYS[1]   <ns>:{<ns>:<q>}:generation  HASH  schedule name -> generation
  ARGV[1..] pairs: schedule name, generation (integer)
  Returns   how many generations were raised
]]
local raised = 0
for a = 1, #ARGV, 2 do
  local name, generation = ARGV[a], tonumber(ARGV[a + 1])
  if generation > tonumber(redis.call('HGET', KEYS[1], name) or '0') then
    redis.call('HSET', KEYS[1], name, generation)
    raised = raised + 1
  end
end
return raised
