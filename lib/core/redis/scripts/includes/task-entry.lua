-- @snippet task-entry: addEntry(stream, id, taskType, payload, meta) appends a task to a stream with
-- the fields in the order Chronos writes them (protocol.ts ENTRY_FIELDS); payload and meta are JSON text.
local function addEntry(stream, id, taskType, payload, meta)
  return redis.call('XADD', stream, '*', 'id', id, 'type', taskType, 'payload', payload, 'meta', meta)
end
-- scheduledForm(taskType, payload, meta) is the compact stored form enqueue.lua writes in <q>:tasks (whose
-- field is the task id): meta, payload and type joined by newlines (JSON text holds no raw newline, so
-- the first two split it; the type may hold anything). Nil when meta or payload holds a newline anyway:
-- then the caller writes the JSON array.
local function scheduledForm(taskType, payload, meta)
  if string.find(meta, '\n', 1, true) or string.find(payload, '\n', 1, true) then return nil end
  return meta .. '\n' .. payload .. '\n' .. taskType
end
-- storedTask(v, id) returns id, type, payload, meta of a stored task v (a value of <q>:tasks, whose field
-- is the task id): the compact form (it starts with "{", the meta) or the JSON array [id, type, payload,
-- meta] (retry.lua, and every task earlier versions stored).
local function storedTask(v, id)
  if string.byte(v, 1) == 123 then
    local a = string.find(v, '\n', 1, true)
    local b = string.find(v, '\n', a + 1, true)
    return id, string.sub(v, b + 1), string.sub(v, a + 1, b - 1), string.sub(v, 1, a - 1)
  end
  local t = cjson.decode(v)
  return t[1], t[2], t[3], t[4]
end
