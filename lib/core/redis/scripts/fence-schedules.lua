--[[ fence-schedules
  Raise the generation of schedules in one queue's slot, beside their lastFired, so that fire.lua
  refuses a trigger planned under an older state of them (before a pause, a removal, a new spec).
  Run by the admin calls after the registry change; never lowers a generation.
  KEYS[1]   <ns>:{<ns>:<q>}:generation  HASH  schedule name -> generation
  ARGV[1..] pairs: schedule name, generation (integer)
  Returns   how many generations were raised
]]
if #ARGV == 0 then return 0 end
-- one HMGET and one HSET for the call (a few hundred names: within Lua's stack for unpack); a
-- name given twice is raised to the higher of its generations
local names, wanted = {}, {}
for a = 1, #ARGV, 2 do
  local name, generation = ARGV[a], tonumber(ARGV[a + 1])
  if wanted[name] == nil then names[#names + 1] = name end
  if wanted[name] == nil or generation > wanted[name] then wanted[name] = generation end
end
local current = redis.call('HMGET', KEYS[1], unpack(names))
local raised = {}
for i, name in ipairs(names) do
  if wanted[name] > tonumber(current[i] or '0') then
    raised[#raised + 1] = name
    raised[#raised + 1] = wanted[name]
  end
end
if #raised > 0 then redis.call('HSET', KEYS[1], unpack(raised)) end
return #raised / 2
