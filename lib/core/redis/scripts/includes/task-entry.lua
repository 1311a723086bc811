-- @snippet task-entry: addEntry(stream, id, taskType, payload, meta) appends a task to a stream with
-- the fields in the order Chronos writes them (protocol.ts ENTRY_FIELDS); payload and meta are JSON text.
local function addEntry(stream, id, taskType, payload, meta)
  return redis.call('XADD', stream, '*', 'id', id, 'type', taskType, 'payload', payload, 'meta', meta)
end
