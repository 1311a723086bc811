-- @snippet task-meta: decodeMeta(text) is a task's meta (JSON text of protocol.ts META) decoded into a
-- table, or nil when it is not a JSON object. A meta that holds a lone UTF-16 surrogate (JSON.stringify
-- writes it as a \udXXX escape, which cjson refuses; it writes a valid pair as raw UTF-8, never
-- escaped: an error text that an earlier version cut inside a pair) is read with each such escape as
-- U+FFFD, so its other fields (retry budget, timeout, group, markers) are kept, not lost with it.
local function decodeMeta(text)
  local ok, meta = pcall(cjson.decode, text)
  if not ok and type(text) == 'string' then
    ok, meta = pcall(cjson.decode, (string.gsub(text, '\\u[dD][89abcdefABCDEF]%x%x', '\\ufffd')))
  end
  if ok and type(meta) == 'table' then return meta end
  return nil
end
