--[[ fence-schedules
  Raise the generation of schedules in one queue's slot, beside their lastFired, so that fire.lua
  refuses a trigger planned under an older state of them (before a pause, a removal, a new spec).
  Run by the admin calls after the registry change; never lowers a generation.
  A raised schedule whose lastFired is after now (Redis time) had its next trigger decided ahead
  of its instant under the old state (fire.lua's lead): enqueued, or refused as exhausted by its
  maxRuns (lastFired advanced past it, no dedup key set). Unless its task is already in the
  stream, its lastFired goes back to now, so a new state plans that trigger again: the caller
  marks the schedule due in its shard (mark-due.lua) and its leader plans it under the new state,
  if it has one. When its task still waits in the scheduled set it is
  retracted: the task, its dedup key and its maxRuns count go, and a `retracted` record is pushed
  onto the schedule's history. A task already in the stream (held by a worker, at most the hold
  window ahead: protocol.ts FIRE_LEAD) is left to run, and so is its lastFired: that trigger has
  been enqueued, once.
  KEYS[1]   <ns>:{<ns>:<q>}:generation  HASH  schedule name -> generation
  KEYS[2]   <ns>:{<ns>:<q>}:last-fired  HASH  schedule name -> lastFired (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:scheduled   ZSET  task id -> due time (epoch ms): delayed tasks
  KEYS[4]   <ns>:{<ns>:<q>}:tasks       HASH  task id -> stored task
  KEYS[5]   <ns>:{<ns>:<q>}:            prefix  the queue's key prefix (dedup:<id>, runs:<schedule>,
            history:<schedule>: keys.ts QueueKeys)
  ARGV[1]   by: who changed the schedules, written into the history records ("" = not named)
  ARGV[2..] pairs: schedule name, generation (integer)
  Returns   {raised, name…}: how many generations were raised, then the names of the schedules
            whose lastFired went back to now (their task retracted or not)
]]
-- @include now-ms
local HISTORY = { limit = 100, trimSlack = 10 } -- protocol.ts HISTORY
if #ARGV < 2 then return { 0 } end
-- one HMGET and one HSET for the call (a few hundred names: within Lua's stack for unpack); a
-- name given twice is raised to the higher of its generations
local names, wanted = {}, {}
for a = 2, #ARGV, 2 do
  local name, generation = ARGV[a], tonumber(ARGV[a + 1])
  if wanted[name] == nil then names[#names + 1] = name end
  if wanted[name] == nil or generation > wanted[name] then wanted[name] = generation end
end
local current = redis.call('HMGET', KEYS[1], unpack(names))
local lastFired = redis.call('HMGET', KEYS[2], unpack(names))
local raised, now, retracted = {}, nil, {}
local P = KEYS[5]
local by = ARGV[1] ~= '' and (',"by":' .. cjson.encode(ARGV[1])) or ''
for i, name in ipairs(names) do
  if wanted[name] > tonumber(current[i] or '0') then
    raised[#raised + 1] = name
    raised[#raised + 1] = wanted[name]
    local last = tonumber(lastFired[i] or '')
    now = now or (last and nowMs())
    if last and last > now then
      local taskId = name .. ':' .. string.format('%d', math.floor(last / 1000))
      local dedupKey = P .. 'dedup:' .. taskId
      local waiting = redis.call('ZREM', KEYS[3], taskId) == 1
      -- not enqueued (no dedup key: refused as exhausted) or taken back: planned again
      if waiting or redis.call('EXISTS', dedupKey) == 0 then
        retracted[#retracted + 1] = name
        redis.call('HSET', KEYS[2], name, now)
      end
      if waiting then
        redis.call('HDEL', KEYS[4], taskId)
        redis.call('DEL', dedupKey)
        local runsKey = P .. 'runs:' .. name
        if (tonumber(redis.call('HGET', runsKey, 'n')) or 0) > 0 then redis.call('HINCRBY', runsKey, 'n', -1) end
        local historyKey = P .. 'history:' .. name
        if redis.call('EXISTS', historyKey) == 1 then
          local rec = '{"triggerAt":' .. string.format('%d', last) .. ',"at":' .. string.format('%d', now) ..
            ',"outcome":"retracted","taskId":' .. cjson.encode(taskId) .. by .. '}'
          if redis.call('LPUSH', historyKey, rec) >= HISTORY.limit + HISTORY.trimSlack then redis.call('LTRIM', historyKey, 0, HISTORY.limit - 1) end
        end
      end
    end
  end
end
if #raised > 0 then redis.call('HSET', KEYS[1], unpack(raised)) end
table.insert(retracted, 1, #raised / 2)
return retracted
