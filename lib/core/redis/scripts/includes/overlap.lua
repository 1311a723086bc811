-- @snippet overlap: the overlap policies beyond skip, where a trigger is fired and where a marker is
-- released (protocol.ts FIRE_MODE bufferOne, cancelPrevious). A schedule's overlap key names its live
-- task. Under buffer-one, its buffer key holds the one trigger waiting behind that task, a STRING
-- "<id of the task it waits behind>\n<graceMs>\n<task id>\n<meta>\n<payload>\n<type>" (meta and payload
-- are JSON text, which holds no raw newline; the type comes last and may hold anything; codec.ts
-- decodeBuffered reads it). Its TTL is the marker's plus graceMs (the trigger's dedup lifetime),
-- renewed with the marker (markers.lua), so a buffered trigger outlives a marker that vanished without
-- a release (its task lost) and the next fire starts it.
-- fireBufferOne(add, stream, overlapKey, bufferKey, taskId, taskType, payload, meta, graceMs, markerMs)
--   enqueues the trigger with add(id, taskType, payload, meta) when the schedule has no live task
--   (taking the marker for markerMs), else keeps it in the buffer unless one waits there already (a
--   buffer whose marker vanished starts first, on stream); returns 'enqueued' | 'buffered' |
--   'skipped' (FIRE_RESULT names). A buffered trigger starts when the task it waits behind ends.
-- fireCancelPrevious(add, overlapKey, taskId, taskType, payload, meta, markerMs) enqueues the trigger
--   with add and takes the marker for markerMs; returns 'superseding' when another task held it (it
--   is superseded), else 'enqueued'. (add writes to the stream, or a delayed task: fire.lua jitter.)
-- bufferGraceMs(v, taskId): the grace (ms) of v when v is a buffer waiting behind taskId, else nil.
-- startBuffered(stream, overlapKey, bufferKey, v): the buffered trigger v (its buffer key's value)
--   starts: its task is appended to stream and takes the overlap marker; the buffer is deleted.
--   Returns its task id.
-- @include task-entry
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
local function splitBuffer(v)
  local parts, from = {}, 1
  for _ = 1, 5 do
    local at = string.find(v, '\n', from, true)
    if not at then return nil end
    parts[#parts + 1] = string.sub(v, from, at - 1)
    from = at + 1
  end
  parts[6] = string.sub(v, from)
  return parts
end
local function bufferGraceMs(v, taskId)
  if string.sub(v, 1, #taskId + 1) ~= taskId .. '\n' then return nil end
  local at = string.find(v, '\n', #taskId + 2, true)
  return at and tonumber(string.sub(v, #taskId + 2, at - 1))
end
local function startBuffered(stream, overlapKey, bufferKey, v)
  redis.call('DEL', bufferKey)
  local p = splitBuffer(v)
  if not p then return nil end
  addEntry(stream, p[3], p[6], p[5], p[4])
  redis.call('SET', overlapKey, p[3], 'PX', MARKER_TTL.waitingMs)
  return p[3]
end
local function fireBufferOne(add, stream, overlapKey, bufferKey, taskId, taskType, payload, meta, graceMs, markerMs)
  local live = redis.call('GET', overlapKey)
  if not live then
    -- a buffer whose marker vanished without a release (its task was lost): it starts first
    local waiting = redis.call('GET', bufferKey)
    if waiting then live = startBuffered(stream, overlapKey, bufferKey, waiting) end
  end
  if not live then
    add(taskId, taskType, payload, meta)
    redis.call('SET', overlapKey, taskId, 'PX', markerMs)
    return 'enqueued'
  end
  if redis.call('EXISTS', bufferKey) == 1 then return 'skipped' end
  local markerTtl = redis.call('PTTL', overlapKey)
  if markerTtl < 0 then markerTtl = MARKER_TTL.waitingMs end
  local v = live .. '\n' .. graceMs .. '\n' .. taskId .. '\n' .. meta .. '\n' .. payload .. '\n' .. taskType
  redis.call('SET', bufferKey, v, 'PX', markerTtl + tonumber(graceMs))
  return 'buffered'
end
local function fireCancelPrevious(add, overlapKey, taskId, taskType, payload, meta, markerMs)
  local live = redis.call('GET', overlapKey)
  add(taskId, taskType, payload, meta)
  redis.call('SET', overlapKey, taskId, 'PX', markerMs)
  if live and live ~= taskId then return 'superseding' end
  return 'enqueued'
end
