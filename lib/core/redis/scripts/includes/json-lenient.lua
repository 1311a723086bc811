-- @snippet json-lenient: decodeLenient(text) decodes JSON text as cjson.decode does, and reads a text
-- that holds a lone UTF-16 surrogate escape (JSON.stringify writes a lone surrogate as \udXXX, which
-- cjson refuses; it writes a valid pair as raw UTF-8, never escaped) with each such escape as U+FFFD.
-- Returns ok, value (as pcall): false and the error when the text is not JSON even so. What an earlier
-- version stored that way (a schedule definition, a task's meta whose error text was cut inside a
-- pair) is then still read, its other fields kept.
local function decodeLenient(text)
  local ok, value = pcall(cjson.decode, text)
  if ok or type(text) ~= 'string' then return ok, value end
  return pcall(cjson.decode, (string.gsub(text, '\\u[dD][89abcdefABCDEF]%x%x', '\\ufffd')))
end
