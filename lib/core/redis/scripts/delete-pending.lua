--[[ delete-pending
  Delete pending tasks (stream entries no worker was given) and release their uid/overlap keys
  when those still name them. An entry a worker took meanwhile (now in the pending entries list)
  is left alone; an entry already gone is skipped: safe to repeat.
  KEYS[1]   <ns>:{<ns>:<q>}:stream  STREAM
  KEYS[2..] per task, its markers (codec.ts markerKeys: uid, overlap, buffer keys), in the order ARGV
            lists the tasks; a trigger buffered behind a deleted task starts (overlap.lua)
  ARGV[1]   group                   string
  ARGV[2..] per task: entry id, task id, n (its keys are the next n of KEYS[2..])
  Returns   {task ids deleted}
]]
-- @include markers
local deleted = {}
local k = 2
for a = 2, #ARGV, 3 do
  local entry, id, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  local held = redis.pcall('XPENDING', KEYS[1], ARGV[1], entry, entry, 1)
  if type(held) == 'table' and held.err then held = {} end -- no consumer group yet: nobody took it
  if #held == 0 and redis.call('XDEL', KEYS[1], entry) == 1 then
    releaseMarkers(KEYS, k, k + n - 1, id, KEYS[1], entry)
    deleted[#deleted + 1] = id
  end
  k = k + n
end
return deleted
