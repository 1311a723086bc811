-- @snippet task-meta: decodeMeta(text) is a task's meta (JSON text of protocol.ts META) decoded into a
-- table, or nil when it is not a JSON object. A meta with a lone UTF-16 surrogate (an error text that
-- an earlier version cut inside a pair) is read by the `json-lenient` snippet, so its other fields
-- (retry budget, timeout, group, markers) are kept, not lost with it.
-- @include json-lenient
local function decodeMeta(text)
  local ok, meta = decodeLenient(text)
  if ok and type(meta) == 'table' then return meta end
  return nil
end
