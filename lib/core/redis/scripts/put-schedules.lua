--[[ put-schedules
  Store one chunk of runtime schedules (the bulk runtime API validates every definition first,
  then sends about 125 per call, pipelined). Mode "add" stores only the names the registry does
  not hold (the others are left untouched and returned); mode "upsert" also replaces a stored
  definition whose fingerprint (`fp`) differs, unless it is declared in code (not a runtime one:
  left untouched and returned as `declared`; mode "upsert-force" replaces it too). A replaced
  definition keeps registeredAt, paused
  and resumedAt, and its changedAt becomes Redis time when the spec, zone, offset, queue or bounds
  changed (carryOver, as schedule-admin.lua's put); a new one gets registeredAt and changedAt = Redis time.
  An unchanged one (the same `fp`) is neither decoded nor written, and a replaced one whose JSON is
  of the layout written here (storedTail) is read without decoding it when its timing and labels
  stay the same (sameRead: the common change of a payload or an option). A chunk with writes takes one
  new registry version (a rising counter: max(INCR, Redis time ms)), the new `generation` of each
  schedule it wrote, except a replacement that changed only the labels (the `schedule-index`
  snippet's labelsOnly): it keeps its generation and is not fenced. The shard's indexes (names,
  labels) follow every write, and its due index: a written schedule is marked "look at it now"
  unless it is paused (taken out) or only its labels changed (the `schedule-index` snippet). Every
  name of a call is of one shard. Nothing is announced here: the caller raises the replaced schedules'
  generations in their previous queues' slots (fence-schedules.lua), then announces the whole
  call once on the changes channel.
  KEYS[1]  <ns>:{<tag>}:schedules  HASH    name -> definition JSON (the shard's: keys.ts ShardKeys)
  KEYS[2]  <ns>:{<tag>}:version    STRING  rising counter
  KEYS[3]  <ns>:{<tag>}:           the shard's key prefix, for its indexes and due index (schedule-index)
  ARGV[1]  mode                         "add" | "upsert" | "upsert-force"
  ARGV[2..] per definition: name, fingerprint, definition JSON without its closing brace (the registry
           form in the form of stored-form.ts encodeStored, without registeredAt, changedAt, paused,
           resumedAt and generation; its `fp` is the fingerprint), then n, the number of its labels, and
           its n label index keys (KEYS[3]..'label:'..key..'='..value, keys.ts ShardKeys.label); stored
           in the same form with those fields appended (the `stored-form` snippet: in the compact form
           changedAt and generation left out when equal to registeredAt)
  Returns  {added, changed, unchanged, redisNowMs, generation, fences, existing, declared}: generation
           is the chunk's new one (0 when nothing but labels was written); fences is a flat list of name,
           previous queue for each replaced definition; existing lists the names mode "add" left
           untouched; declared the code-declared ones mode "upsert" left untouched
]]
-- @include now-ms
-- @include rising-counter
-- @include schedule-timing
-- @include schedule-index
-- @include stored-form
-- what carryOver sets (numbers and a boolean: asJson writes them as JSON)
local carried = {'registeredAt', 'changedAt', 'paused', 'resumedAt'}
-- a number or a boolean as JSON: an integer (an instant in ms, a generation) with %d, which is
-- several times cheaper than the %.14g of tostring (the same digits below 1e14)
local function asJson(v)
  if type(v) == 'number' and v == math.floor(v) and v > -1e15 and v < 1e15 then return string.format('%d', v) end
  return tostring(v)
end
-- the labels and the timing fingerprint of a definition JSON sent without its closing brace, or nil
-- when it has no labels. The bulk API's JSON (definition.ts finishStored) ends with
-- …,"labels":{…},"fp":"<16 hex>","tfp":"<16 hex>": only the labels object is decoded (a whole
-- definition costs several times more); another layout is decoded whole. The first raw `"labels":`
-- is the top-level key (inside a string value the quotes are escaped)
local function labelPart(json)
  local at = string.find(json, '"labels":', 1, true)
  if not at then return nil end
  local n = #json
  if string.sub(json, n - 48, n - 42) == ',"fp":"' and string.sub(json, n - 25, n - 17) == '","tfp":"' then
    return {labels = cjson.decode(string.sub(json, at + 9, n - 49)), tfp = string.sub(json, n - 16, n - 1)}
  end
  local whole = cjson.decode(json .. '}')
  return {labels = whole['labels'], tfp = whole['tfp']}
end
-- the timing keys a JSON prefix may leave out (each then at its fill value), as searched for
local omittable = {{'timeZone', ',"timeZone":'}, {'offsetMs', ',"offsetMs":'}, {'queue', ',"queue":'}}
-- whether a stored definition `old` holds none of the timing keys the JSON prefix `prefix` leaves out
local function omittedIn(prefix, old)
  for _, k in ipairs(omittable) do
    if old[k[1]] ~= nil and not string.find(prefix, k[2], 1, true) then return false end
  end
  return true
end
-- whether a definition JSON as sent (without registeredAt, changedAt and resumedAt) may hold a bound
-- (startAt, endAt, maxRuns): a raw key ending in `At` or `Runs` (a label's key too: then it is only
-- decoded); the rare letters A and R keep the search short
local function boundsIn(json)
  return string.find(json, 'At":', 1, true) or string.find(json, 'Runs":', 1, true)
end
-- whether a decoded stored definition holds a bound
local function hasBounds(def)
  return def['startAt'] ~= nil or def['endAt'] ~= nil or def['maxRuns'] ~= nil
end
-- the keys a stored JSON of this script's layout ends with: its fingerprints, then numbers and
-- booleans (`replaced` and the `stored-form` snippet write them)
local tailKeys = {fp = true, tfp = true, registeredAt = true, changedAt = true, generation = true, paused = true, resumedAt = true}
-- the stored JSON `cur` read from `,"fp":"` at f: its tail decoded alone (an object of tailKeys up
-- to the JSON's end; a few of its hundreds of bytes), or nil when that is not one (cjson refuses
-- text after the object's closing brace, so a `,"fp":"` inside the labels object fails)
local function tailAt(cur, f)
  local ok, def = pcall(cjson.decode, '{' .. string.sub(cur, f + 1))
  if not ok or type(def) ~= 'table' or type(def['fp']) ~= 'string' then return nil end
  for k in pairs(def) do
    if not tailKeys[k] then return nil end
  end
  def['fpAt'] = f
  return def
end
-- A stored definition read without decoding it (most of a changed upsert's cost in Redis was the
-- decoding), when its JSON has the layout this script writes (definition-check.ts finishStored and
-- the `stored-form` snippet): …,"fp":"<16 hex>"[,"tfp":"<16 hex>"] then only tailKeys, last.
-- Returns a table with fp, tfp, the tail's fields, name (true in the full form: storedGeneration),
-- runtime, and fpAt (where `,"fp":"` begins); nil for another layout (then it is decoded). The
-- `,"fp":"` taken is the top-level one: a label's key "fp" is followed by the labels' closing brace
-- or another string, never by tail fields up to the JSON's last byte, and inside a string the quotes
-- are escaped (as is every quote of `payload`, a JSON string). A raw `"runtime":true` is the top-level
-- key for the same reason (a label's value is a string).
local function storedTail(cur)
  local n = #cur
  local f = string.find(cur, ',"fp":"', math.max(1, n - 320), true)
  while f do
    local def = tailAt(cur, f)
    if def then
      def['name'] = string.sub(cur, 1, 8) == '{"name":' or nil
      -- (searched from its rare letter u: no other key ends in "untime", an escaped one has a backslash)
      def['runtime'] = string.find(cur, 'untime":true', 1, true) ~= nil
      return def
    end
    f = string.find(cur, ',"fp":"', f + 1, true)
  end
  return nil
end
-- where `,"fp":"` begins in a definition JSON as sent (without its closing brace: labels, fp and
-- tfp last, or fp last without labels), or nil
local function sentFpAt(json)
  local n = #json
  if string.sub(json, n - 25, n - 17) == '","tfp":"' then
    return string.sub(json, n - 48, n - 42) == ',"fp":"' and n - 48 or nil
  end
  return string.sub(json, n - 23, n - 17) == ',"fp":"' and n - 23 or nil
end
-- the labels object's text of a JSON whose `,"fp":"` begins at f: '' for none; nil when `"labels":`
-- is not the key right before fp (the first raw `"labels":` is the top-level key)
local function labelsText(json, f)
  local at = string.find(json, '"labels":', 1, true)
  if not at or at > f then return '' end
  if string.byte(json, f - 1) ~= 125 then return nil end
  return string.sub(json, at + 9, f - 1)
end
-- what no stored JSON read by its tail may hold before its fp: a bound (a raw key ending in At or
-- Runs), or a registry field (registeredAt, changedAt and resumedAt end in At; paused, generation)
local beforeFp = {'At":', 'Runs":', 'used":', 'generation":'}
-- whether a replacement `newJson` (without its closing brace; `prefix` its timing, or nil) of the
-- stored JSON `cur`, read by storedTail as `old`, keeps the timing and the labels: `cur` begins with
-- the same timing prefix and holds none of the timing keys it leaves out, neither holds a bound (a
-- raw key ending in At or Runs before its fp: a label's key too, then it is just decoded), `cur`
-- holds no registry field before its fp (so `old` has them all), and the labels' texts are the same
-- (the same bytes parse as the same object). Sets old.queue.
local function sameRead(cur, newJson, old, prefix)
  if not prefix or string.find(cur, prefix, 1, true) ~= 1 or boundsIn(newJson) then return false end
  for _, k in ipairs(omittable) do
    if not string.find(prefix, k[2], 1, true) and string.find(cur, k[2], #prefix, true) then return false end
  end
  -- no bound, and none of the registry fields, before fp: the tail holds every field carried over
  -- (registeredAt, changedAt and resumedAt end in At; another writer's key order is decoded)
  local f = old['fpAt']
  for i = 1, #beforeFp do
    local at = string.find(cur, beforeFp[i], 1, true)
    if at and at < f then return false end
  end
  local nf = sentFpAt(newJson)
  local was = labelsText(cur, f)
  if not nf or not was or was ~= labelsText(newJson, nf) then return false end
  -- the queue: the prefix's (a plain name; one with an escape is decoded), else the fill value
  local q = string.find(prefix, ',"queue":', 1, true)
  if q then
    old['queue'] = string.match(prefix, '^"([^"\\]*)",', q + 9)
    if not old['queue'] then return false end
  end
  return true
end
-- the label-free fingerprint of a definition JSON as sent: its tfp, else (no labels) its fp
local function sentTfp(json, fp)
  local n = #json
  if string.sub(json, n - 25, n - 17) == '","tfp":"' then return string.sub(json, n - 16, n - 1) end
  return fp
end
local now = nowMs()
local upsert = ARGV[1] == 'upsert' or ARGV[1] == 'upsert-force'
local force = ARGV[1] == 'upsert-force'
-- each definition's first argument (its name), by definition
local names, from = {}, {}
local a = 2
while a <= #ARGV do
  names[#names + 1] = ARGV[a]
  from[#from + 1] = a
  a = a + 4 + tonumber(ARGV[a + 3])
end
if #names == 0 then return {0, 0, 0, now, 0, {}, {}, {}} end
-- one HMGET and one HSET for the chunk (a few hundred fields: within Lua's stack for unpack)
local stored = redis.call('HMGET', KEYS[1], unpack(names))
-- the definitions to write (their indexes), and the decoded stored definitions they replace
local writes, olds = {}, {}
local existing = {}
local declared = {}
local unchanged = 0
for i, name in ipairs(names) do
  local fp, cur = ARGV[from[i] + 1], stored[i]
  if cur and not upsert then
    existing[#existing + 1] = name
  elseif cur and string.find(cur, ',"fp":"' .. fp .. '"', math.max(1, #cur - 320), true) then
    -- unchanged: the stored JSON holds this fingerprint as its top-level "fp" (inside a string
    -- value the quotes would be escaped), so it is not decoded. Searched near its end, where this
    -- script's layout has it (storedTail), from its rarer comma: another layout is decoded
    unchanged = unchanged + 1
  else
    -- read by its tail when it has the layout written here (storedTail), else decoded
    local old = cur and (storedTail(cur) or decodeStored(cur))
    if old and old['fp'] == fp then
      unchanged = unchanged + 1
    elseif old and old['runtime'] ~= true and not force then
      declared[#declared + 1] = name
    else
      writes[#writes + 1] = i
      if old then olds[i] = old end
    end
  end
end
local added, changed, generation = 0, 0, 0
local fences = {}
local hset = {}
-- the names index and the due marks of the chunk: one ZADD each (and one ZMSCORE), not one per name;
-- scores are given as text ('0'): a number argument is formatted (%.17g) for each one
local named = {}
local marked = {}
-- the label indexes' additions, one ZADD per label key (labelsIndexed)
local labelAdds = {}
-- the tail of a new schedule's JSON, by form (true: compact), made at the chunk's first new one
local freshTail
-- the timing prefix of a definition JSON as sent, or nil (see `replaced`)
local function timingPrefix(json)
  local cut = string.sub(json, 1, 8) == '{"name":' and ',"type":' or ',"runtime":'
  local t = string.find(json, cut, 1, true)
  return t and string.sub(json, 1, t + #cut - 1)
end
-- a replacement of the stored definition `old` (JSON `cur`; decoded, or read by storedTail when
-- `same`: sameRead found the same timing and labels) by `newJson` (without its closing brace),
-- whose labels part is `new` (not read when `same`):
-- counts it, fences it (unless only its labels changed: labelsOnly), marks it due (unless paused:
-- taken out of the index) and returns the JSON to store, with what carryOver keeps of `old`
local function replaced(name, cur, newJson, old, fp, new, compact, prefix, same)
  -- the label-only rule: the fingerprint without labels (`tfp`, else `fp`) is the same as before
  local oldGeneration = storedGeneration(old)
  local sentT = same and sentTfp(newJson, fp) or (new and new['tfp'] or fp)
  local keep = oldGeneration and (old['tfp'] or old['fp']) == sentT and oldGeneration
  if not keep and generation == 0 then generation = risingCounter(KEYS[2], now) end
  -- carryOver decides from the timing alone; the JSON sent holds none of the fields carryOver and
  -- the generation set, so they are appended to it as it is.
  -- The JSON sent begins with the timing: in the full form {"name":…,"expression":…,"timeZone":…,
  -- "offsetMs":…,"queue":…, ended by the first unescaped `,"type":`; in the compact form
  -- {"expression":…, then "timeZone", "offsetMs" and "queue" unless left out, ended by
  -- `,"runtime":`. A stored JSON that begins with the same bytes and holds none of the timing
  -- keys the prefix leaves out has the same timing (one this script wrote; another writer's key
  -- order just takes the decoding path). The bounds are part of the timing too: a JSON that may
  -- hold one takes the decoding path.
  local def
  if same or (prefix and string.sub(cur, 1, #prefix) == prefix and omittedIn(prefix, old) and not boundsIn(newJson) and not hasBounds(old)) then
    def = {expression = old['expression'], timeZone = old['timeZone'], offsetMs = old['offsetMs'], queue = old['queue']}
  else
    local whole = cjson.decode(newJson .. '}')
    def = {expression = whole['expression'], timeZone = whole['timeZone'], offsetMs = whole['offsetMs'], queue = whole['queue'],
      startAt = whole['startAt'], endAt = whole['endAt'], maxRuns = whole['maxRuns']}
  end
  changed = changed + 1
  if not keep then
    fences[#fences + 1] = name
    fences[#fences + 1] = storedQueue(old)
  end
  carryOver(def, old, now)
  local tail = {''}
  local at = compact and def['registeredAt']
  for _, field in ipairs(carried) do
    local v = def[field]
    if v ~= nil and v ~= cjson.null and not (at and (v == false or (field == 'changedAt' and v == at))) then
      tail[#tail + 1] = '"' .. field .. '":' .. asJson(v)
    end
  end
  local gen = keep or generation
  if gen ~= at then tail[#tail + 1] = '"generation":' .. asJson(gen) end
  if def['paused'] == true then
    redis.call('ZREM', KEYS[3] .. 'due', name)
  elseif not keep then
    marked[#marked + 1] = name
  end
  return newJson .. table.concat(tail, ',') .. '}'
end
if #writes > 0 then
  for _, i in ipairs(writes) do
    local name, cur, old, a = names[i], stored[i], olds[i], from[i]
    local fp, newJson = ARGV[a + 1], ARGV[a + 2]
    -- a JSON in the compact form (no "name": the bulk API's with compactSchedules) stays compact, as
    -- the `stored-form` snippet's encodeStored makes it: changedAt and the generation left out when
    -- equal to registeredAt, paused when false. (A `"name":` found elsewhere, a label's key, only keeps
    -- them.) The full form begins with its name: found at once.
    local compact = not string.find(newJson, '"name":', 1, true)
    if not old then
      -- a new schedule (most of a bulk add): registeredAt = changedAt = now, the chunk's generation;
      -- its tail is the same for every new one of the chunk, made once; its label index keys are
      -- the ones sent (no JSON decoded)
      if generation == 0 then generation = risingCounter(KEYS[2], now) end
      if not freshTail then
        freshTail = {[true] = ',"registeredAt":' .. now .. (generation ~= now and ',"generation":' .. generation or '') .. '}',
          [false] = ',"registeredAt":' .. now .. ',"changedAt":' .. now .. ',"generation":' .. generation .. '}'}
      end
      added = added + 1
      marked[#marked + 1] = name
      newJson = newJson .. freshTail[compact]
      for j = a + 4, a + 3 + tonumber(ARGV[a + 3]) do
        local list = labelAdds[ARGV[j]]
        if not list then
          list = {}
          labelAdds[ARGV[j]] = list
        end
        list[#list + 1] = '0'
        list[#list + 1] = name
      end
    else
      -- read without decoding when the timing and labels stay (old came from storedTail); else
      -- decoded, with what the label indexes need of the new definition (nil: no labels); the
      -- whole new one is decoded only when it does not begin with the stored timing
      local prefix = timingPrefix(newJson)
      local same = old['fpAt'] ~= nil and sameRead(cur, newJson, old, prefix)
      if old['fpAt'] ~= nil and not same then old = decodeStored(cur) end
      local new = not same and labelPart(newJson)
      newJson = replaced(name, cur, newJson, old, fp, new, compact, prefix, same)
      if new or (not same and old['labels']) then labelsIndexed(KEYS[3], name, old, new or {}, labelAdds) end
    end
    named[#named + 1] = '0'
    named[#named + 1] = name
    hset[#hset + 1] = name
    hset[#hset + 1] = newJson
  end
  markDueAll(KEYS[3], marked, now)
  for key, list in pairs(labelAdds) do redis.call('ZADD', key, unpack(list)) end
  redis.call('ZADD', KEYS[3] .. 'index:names', unpack(named))
  redis.call('HSET', KEYS[1], unpack(hset))
end
return {added, changed, unchanged, now, generation, fences, existing, declared}
