--[[ renew-markers
  Renew the markers of tasks put back in the stream (reclaimed from a dead consumer, or given back
  at shutdown) to the lifetime of a waiting task, each only where it still names its task, so that
  a task waiting for a worker keeps its id and its schedule (protocol.ts MARKER_TTL).
  KEYS[1..] per task, its markers (codec.ts markerKeys: uid, overlap, buffer keys), in the order ARGV
            lists the tasks
  ARGV[1..] per task: task id, n (its keys are the next n of KEYS)
  Returns   number of tasks
]]
-- @include markers
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
local k, tasks = 1, 0
for a = 1, #ARGV, 2 do
  local n = tonumber(ARGV[a + 1])
  holdMarkers(KEYS, k, k + n - 1, ARGV[a], MARKER_TTL.waitingMs)
  k = k + n
  tasks = tasks + 1
end
return tasks
