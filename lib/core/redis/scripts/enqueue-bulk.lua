--[[ enqueue-bulk
  Append many ready tasks to one queue's stream: what a plain immediate enqueue (a bare XADD) does,
  for a batch in one call, so a bulk enqueue is one command per batch on the client's side. Each
  entry is written as addEntry writes it (protocol.ts ENTRY_FIELDS).
  KEYS[1]   <ns>:{<ns>:<q>}:stream       STREAM  ready tasks
  ARGV[1..] per task 4 values: task id, task type, payload (JSON text), meta (JSON text, fields: protocol.ts META)
  Returns   the number of tasks appended
]]
-- @include task-entry
local stream = KEYS[1]
local n = 0
for i = 1, #ARGV, 4 do
  addEntry(stream, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
  n = n + 1
end
return n
