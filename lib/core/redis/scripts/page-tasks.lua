--[[ page-tasks
  Read one page of a task set (scheduled, retry or dead) in score order (due or failed-at time)
  from a cursor, with each task's stored form: O(log N + limit), plus the tasks tied at the
  cursor's score when the cursor's own task left the set meanwhile (at most 10000 looked at).
  KEYS[1]  <ns>:{<ns>:<q>}:scheduled|retry|dead  ZSET    task id -> due / failed-at (epoch ms)
  KEYS[2]  <ns>:{<ns>:<q>}:tasks|dead-tasks      HASH    task id -> encoded task
  ARGV[1]  after id                              string  last task of the previous page; "" = from the start
  ARGV[2]  after score                           number  its score (used when it left the set)
  ARGV[3]  limit                                 integer most tasks returned (<= 1000)
  ARGV[4]? payloads                              "0"|"1" "0": each encoded task with its payload as null (default "1")
  ARGV[5]? most bytes                            integer stop after the task that passes this many bytes of encoded tasks
                                                         read (at least one task; default: no bound)
  Returns  flat {id, score, encoded task ("" when the hash has none), id, score, ...}, and a last
           element "cut" when it stopped at most bytes before limit with tasks left in the set
  With payloads "0" a reader of the type, error, group and meta (dead groups) gets no payload over
  the wire (up to 1 MB each: 10,000 dead tasks were GBs per read, trial 45). Most bytes bounds what
  one call copies out of the hash, with payloads or without (1000 tasks of 1 MB held Redis for
  seconds; 200 with their payloads held it 1.4 to 3.1 s, review48). The array form
  ["<id>","<type>","<payload>","<meta>"] holds only JSON strings, in which every '"' is escaped: each
  ',"' in it is a boundary between two of them. The compact form "<meta>\n<payload>\n<type>" has its
  payload between its two first newlines (JSON text has none). A text of neither shape is returned whole.
]]
local limit = math.min(tonumber(ARGV[3]), 1000)
local payloads = ARGV[4] ~= '0'
local budget = (ARGV[5] and tonumber(ARGV[5])) or nil

local function withoutPayload(s)
  local first = string.byte(s, 1)
  if first == 91 then -- '[': the array form
    local a = string.find(s, ',"', 1, true)
    local b = a and string.find(s, ',"', a + 2, true)
    local c = b and string.find(s, ',"', b + 2, true)
    if c then return string.sub(s, 1, b) .. '"null"' .. string.sub(s, c) end
  elseif first == 123 then -- '{': the compact form
    local a = string.find(s, '\n', 1, true)
    local b = a and string.find(s, '\n', a + 1, true)
    if b then return string.sub(s, 1, a) .. 'null' .. string.sub(s, b) end
  end
  return s
end

local start = 0
if ARGV[1] ~= '' then
  local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
  if rank then
    start = rank + 1
  else
    start = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[2])
    local tied = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2], 'LIMIT', 0, 10000)
    for _, id in ipairs(tied) do
      if id < ARGV[1] then start = start + 1 else break end
    end
  end
end
local rows = redis.call('ZRANGE', KEYS[1], start, start + limit - 1, 'WITHSCORES')
local out = {}
local read = 0
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  local stored = redis.call('HGET', KEYS[2], rows[i]) or ''
  read = read + #stored
  if not payloads and stored ~= '' then stored = withoutPayload(stored) end
  out[#out + 1] = stored
  if budget and read >= budget and i + 1 < #rows then
    out[#out + 1] = 'cut'
    break
  end
end
return out
