-- @snippet stored-form: the two forms of a stored schedule definition (stored-form.ts): the full form
-- (every field, `name` first: versions before the compact form) and the compact form (no `name`;
-- each field at its fill value left out, and changedAt and generation when equal to registeredAt).
-- A definition here is a decoded JSON table of either form.
-- storedQueue(def) its queue ('default' when left out).
-- storedGeneration(def) its generation: registeredAt when a compact one leaves it out; nil for a full
--   one without (stored by a version before generations).
-- storedChangedAt(def) its changedAt: registeredAt when a compact one leaves it out.
-- sameTiming(a, b) whether two definitions have the same spec, zone, offset and queue, and the same
--   bounds (startAt, endAt, maxRuns): the same triggers exist under both.
-- encodeStored(def) the JSON to store: a compact definition leaves out changedAt and generation
--   equal to its registeredAt, and paused when false (def is changed so); a full one is kept whole.
--   Every integer keeps all its digits (cjson alone keeps 14).
-- decodeStored(json) a stored definition's JSON decoded. One that an earlier version stored with a
--   lone UTF-16 surrogate is read by the `json-lenient` snippet, so it can still be removed, paused or
--   replaced (definition.ts refuses new ones); an error when it is not JSON even so.
-- @include json-lenient
local function storedQueue(def)
  return def['queue'] or 'default'
end
local function storedGeneration(def)
  if def['generation'] ~= nil or def['name'] ~= nil then return def['generation'] end
  return def['registeredAt']
end
local function storedChangedAt(def)
  if def['changedAt'] ~= nil or def['name'] ~= nil then return def['changedAt'] end
  return def['registeredAt']
end
local function sameTiming(a, b)
  return a['expression'] == b['expression'] and (a['timeZone'] or 'UTC') == (b['timeZone'] or 'UTC')
    and (a['offsetMs'] or 0) == (b['offsetMs'] or 0) and storedQueue(a) == storedQueue(b)
    and a['startAt'] == b['startAt'] and a['endAt'] == b['endAt'] and a['maxRuns'] == b['maxRuns']
end
-- cjson writes a number with 14 significant digits (%.14g), so an integer of more digits — a
-- maxRuns or catchUpWindowMs up to 2^53 - 1, a far startAt or endAt, all accepted by the
-- validation — would be stored rounded (9007199254740991 as 9007199254741000). Such a top-level
-- value is encoded as a placeholder string (a NUL character and its index), and that key's
-- placeholder is then written back with all its digits (%d: exact below 2^63). Only the key's own
-- `"<key>":"\u0000<i>"` is replaced: a top-level key occurs once, and no nested key can hold it
-- (a label value has no control character; the payload is a string, its quotes escaped).
local function encodeStored(def)
  if def['name'] == nil then
    local at = def['registeredAt']
    if at ~= nil and def['changedAt'] == at then def['changedAt'] = nil end
    if at ~= nil and def['generation'] == at then def['generation'] = nil end
    if def['paused'] == false then def['paused'] = nil end
  end
  local swapped, n = {}, 0
  for k, v in pairs(def) do
    if type(v) == 'number' and v == math.floor(v) and (v >= 1e14 or v <= -1e14) and v < 9.2e18 and v > -9.2e18
      and string.find(k, '^%a+$') then
      n = n + 1
      swapped[k] = {v, n}
      def[k] = '\0' .. n
    end
  end
  local json = cjson.encode(def)
  if n == 0 then return json end
  for k, s in pairs(swapped) do
    def[k] = s[1]
    json = string.gsub(json, '"' .. k .. '":"\\u0000' .. s[2] .. '"', '"' .. k .. '":' .. string.format('%d', s[1]), 1)
  end
  return json
end
local function decodeStored(json)
  local ok, def = decodeLenient(json)
  if not ok then error(def, 0) end
  return def
end
