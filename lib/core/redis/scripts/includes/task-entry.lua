-- @snippet task-entry: addEntry(stream, id, taskType, payload, meta) appends a task to a stream with
-- the fields in the order Chronos writes them (protocol.ts ENTRY_FIELDS); payload and meta are JSON text.
local function addEntry(stream, id, taskType, payload, meta)
  return redis.call('XADD', stream, '*', 'id', id, 'type', taskType, 'payload', payload, 'meta', meta)
end
-- storedTask(v, id) returns id, type, payload, meta of a stored task v (a value of <q>:tasks, whose field
-- is the task id): the JSON array [type, payload, meta] that enqueue.lua writes, or [id, type, payload,
-- meta] (retry.lua, and every task stored before the id was left out of the value).
local function storedTask(v, id)
  local t = cjson.decode(v)
  if #t == 3 then return id, t[1], t[2], t[3] end
  return t[1], t[2], t[3], t[4]
end
