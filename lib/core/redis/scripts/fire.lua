--[[ fire
  Enqueue schedule triggers that target one queue, each at most once ever: per trigger, SET NX
  of its dedup key <schedule>:<trigger-unix>, the enqueue, and the advance of lastFired happen
  together. A trigger may be enqueued at most `leadMs` before its instant by Redis server time
  (workers hold such a task and start it at the instant); one further ahead is refused, so a
  leader with a fast clock can never fire early. A trigger planned under an older generation of
  its schedule than the one stored beside lastFired (the schedule was paused, removed or changed
  since the leader loaded it) is refused too; an accepted one raises the stored generation to its own.
  A trigger with a dueAt later than now (its schedule's jitter) is decided here like any other, at
  its nominal instant, but its task is written as a delayed task due at dueAt (scheduled set and
  tasks hash) instead of to the stream; the caller then indexes the queue's due time (lower-due.lua).
  A trigger of a schedule with maxRuns is refused once the schedule's runs counter reached it; the
  counter is raised only when a trigger is enqueued (or buffered), and starts afresh when the
  maxRuns it was counted under differs from the trigger's. The task of the trigger that reaches it
  (the last run) is written without its meta's supersededAt: no newer trigger supersedes it.
  The writes every trigger makes to the queue's shared keys (lastFired, generation, the delayed
  tasks) are made together at the end of the call, one command per key (a later trigger of the same
  schedule in the call reads them back from the call's own tables); a malformed trigger ends the
  call with an error after the writes of the triggers before it.
  KEYS[1]   <ns>:{<ns>:<q>}:stream              STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:last-fired          HASH   schedule name -> lastFired (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:generation          HASH   schedule name -> generation (fence-schedules.lua)
  KEYS[4]   <ns>:{<ns>:<q>}:scheduled           ZSET   task id -> due time (epoch ms): delayed tasks
  KEYS[5]   <ns>:{<ns>:<q>}:tasks               HASH   task id -> "<meta>\n<payload>\n<type>" (task-entry scheduledForm)
  KEYS[6]   <ns>:{<ns>:<q>}:              prefix  the queue's key prefix: each trigger's keys are built on it
            (keys.ts QueueKeys): its dedup key dedup:<schedule>:<trigger-unix> (the task id), then,
            when its mode is "s", "b" or "c", the overlap key overlap:<schedule> (set with a TTL:
            protocol.ts MARKER_TTL), when it is "b" the buffer key buffered:<schedule> (overlap.lua),
            when it has a maxRuns its runs counter runs:<schedule> (HASH: max, n), when its history
            flag is not "" its history LIST history:<schedule> (scheduler/history.ts)
  ARGV[1]   nowMs: "" to decide by Redis server time (always, outside tests), or a test clock's
            epoch ms
  ARGV[2]   leadMs: how long before its instant a trigger may be enqueued, ms
  ARGV[3]   by: who fires (the leader's instance id), written into history records
  ARGV[4]   historyLimit: most records a history list keeps (SchedulerOptions.historyLimit, 1-100;
            a leader with 0 sends no history flag)
  ARGV[5]   leaseUntil: the instant the caller's lease on the schedules' shard expires in Redis
            (epoch ms, the same clock as nowMs: the shards.lua call that last renewed it ran at
            redisNowMs, plus the lease TTL), or "" for no lease fence (a test clock). At or after it
            another instance may hold the shard, so the whole call is refused (every trigger
            unleased, nothing written): a leader paused between its local lease check and its call
            (SIGSTOP, a long GC) cannot fire on the strength of a lease it lost. The shard's key is
            not among KEYS (on a cluster it lives in another slot): the fence is the lease's end in
            Redis time, which is exact, as shards.lua frees a shard at its expiresAt
  ARGV[6..] per trigger, 3 values: its schedule name; its fields, separated by one space each:
            triggerAtMs (epoch ms), dedupTtlMs (ms), mode, generation, liveUntil, dueAt, maxRuns,
            history flag (the last four may be empty); its task "<meta>\n<payload>\n<type>" (as
            task-entry scheduledForm: meta and payload are JSON text without a raw newline; "" in
            mode x). Its task id is <schedule>:<trigger-unix> (floor(triggerAtMs / 1000)), also its
            dedup key's suffix. The fields: mode (modes: protocol.ts FIRE_MODE): "a" enqueue
            (overlap allowed) | "s" enqueue unless the
            schedule's previous task is live (overlap skip) | "b" enqueue, or while the previous task is
            live keep it in the buffer key unless one waits there (overlap buffer-one) | "c" enqueue,
            taking the overlap marker from the previous task (overlap cancel-previous) | "x" only
            advance lastFired (a trigger skipped by the catch-up policy); generation: the schedule's
            generation it was planned under; liveUntil (epoch ms, Redis time; "" = none, "-1" =
            never live): until when a live instance declares
            the schedule, by the leader's last liveness read (a stale read only makes it earlier).
            A trigger dated after it is refused in the enqueue modes: no trigger after the
            instant the schedule became orphaned is ever enqueued; dueAt (epoch ms; "" = none):
            when its task may start (nominal instant plus the schedule's jitter shift);
            maxRuns ("" = none): the most triggers the schedule enqueues in total; history
            flag: "" no record | "r" record the outcome (a trigger of mode x: "p" skipped by the pause,
            "c" by the catch-up policy); upper case ("R", "P", "C") also renews the list's TTL
            (whatever the outcome); digits after the letter: how many triggers the record stands for
            (its "count", when more than 1). A record (JSON: triggerAt, at = now, outcome, taskId, count, by) is pushed at
            the head of the list for every result but early, stale, fenced, orphaned and exhausted,
            in trigger order, and the list is trimmed to historyLimit once it holds historyLimit
            + its slack, a tenth of it, at least 1 (protocol.ts HISTORY for the default 100;
            history.ts recordFires writes the same records)
  Returns   one code per trigger (codes: protocol.ts FIRE_RESULT): 1 enqueued | 0 duplicate (fired
            before) | 2 skipped (overlap: the previous task of the schedule is still live) | 3 early
            (more than leadMs ahead) | 4 stale (at or before lastFired) | 5 advanced (mode x) |
            6 fenced (planned under an older generation) | 7 orphaned (dated after liveUntil) | 8 buffered
            (mode b: it starts when the previous task ends) | 9 superseding (mode c: enqueued, the
            previous task was live and is superseded) | 10 exhausted (maxRuns reached: not enqueued,
            lastFired advanced) | 11 unleased (the call ran at or after leaseUntil: every trigger
            refused, nothing written); then "now" (epoch ms) as the last element
]]
-- @include now-ms
-- @include task-entry
-- @include overlap
local FIRE_MODE = { allowOverlap = 'a', skipOverlap = 's', bufferOne = 'b', cancelPrevious = 'c', advanceOnly = 'x' } -- protocol.ts FIRE_MODE
local FIRE_RESULT = { duplicate = 0, enqueued = 1, skipped = 2, early = 3, stale = 4, advanced = 5, fenced = 6, orphaned = 7, buffered = 8, superseding = 9, exhausted = 10, unleased = 11 } -- protocol.ts FIRE_RESULT
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
local HISTORY = { ttlMs = 2592000000 } -- protocol.ts HISTORY
local historyLimit = tonumber(ARGV[4]) or 100
local historySlack = math.max(1, math.floor(historyLimit / 10))
local META = { supersededAt = 'nx' } -- protocol.ts META
local historyOutcome = { [0] = 'duplicate', [1] = 'enqueued', [2] = 'skipped-overlap', [8] = 'buffered', [9] = 'superseding' } -- history.ts FireOutcome (advanced: skipped-paused / skipped-catch-up by the trigger's flag)
local withTaskId = { [0] = true, [1] = true, [8] = true, [9] = true }
local now = tonumber(ARGV[1]) or nowMs()
local lead = tonumber(ARGV[2])
local by = cjson.encode(ARGV[3])
local P = KEYS[6]
local out = {}
local leaseUntil = tonumber(ARGV[5])
if leaseUntil and now >= leaseUntil then
  for _ = 6, #ARGV, 3 do out[#out + 1] = FIRE_RESULT.unleased end
  out[#out + 1] = now
  return out
end
-- the per-trigger writes to shared keys, made once at the end (flush): lastFired and generation
-- (read back from here, as numbers, by a later trigger of the same schedule in this call), delayed
-- tasks. Written as the text the caller sent: a Lua number passed to redis.call is formatted with
-- %.17g (some 5,000 instructions of Redis each, measured with callgrind)
local lastFired, generations = {}, {}
local lastFiredText, generationText, delayedTasks, delayedDue = {}, {}, {}, {}
-- the numbers of the call's texts (tonumber is strtod, some 1,500 instructions for an instant): the
-- triggers of a call mostly share their instants and generations
local numbers = {}
local function num(text)
  local v = numbers[text]
  if v == nil then
    v = tonumber(text)
    if v ~= nil then numbers[text] = v end
  end
  return v
end
local function flushPairs(cmd, key, map, scoreFirst)
  local args, n = {}, 0
  for field, value in pairs(map) do
    if scoreFirst then args[n + 1], args[n + 2] = value, field else args[n + 1], args[n + 2] = field, value end
    n = n + 2
    if n >= 1000 then
      redis.call(cmd, key, unpack(args, 1, n))
      n = 0
    end
  end
  if n > 0 then redis.call(cmd, key, unpack(args, 1, n)) end
end
-- the stored generation and lastFired of the call's schedules, read at once (one HMGET each per 1,000
-- triggers); a later trigger of the same schedule reads the call's own tables above first
local storedGen, storedLast = {}, {}
do
  local names, n = {}, 0
  local function readAll()
    local gens = redis.call('HMGET', KEYS[3], unpack(names, 1, n))
    local lasts = redis.call('HMGET', KEYS[2], unpack(names, 1, n))
    for i = 1, n do
      storedGen[names[i]] = num(gens[i] or '0')
      storedLast[names[i]] = num(lasts[i] or '-1')
    end
    n = 0
  end
  for a = 6, #ARGV, 3 do
    n = n + 1
    names[n] = ARGV[a]
    if n == 1000 then readAll() end
  end
  if n > 0 then readAll() end
end
local function flush()
  flushPairs('HSET', KEYS[2], lastFiredText)
  flushPairs('HSET', KEYS[3], generationText)
  flushPairs('HSET', KEYS[5], delayedTasks)
  flushPairs('ZADD', KEYS[4], delayedDue, true)
end
-- pushes one fire record at the head of a schedule's history (see history flag above); the parts
-- every record of this call shares are made once
local atText = ',"at":' .. string.format('%d', now) .. ',"outcome":"'
local historyTtl = string.format('%d', HISTORY.ttlMs)
local byText = ',"by":' .. by .. '}'
-- (f: the trigger's parsed fields, fieldsOf below). The task id is written as JSON text without
-- cjson: a schedule name (keys.ts isStoredName: letters, digits, _ . - :) and the digits after it
-- hold no character JSON escapes
local function record(key, f, code, taskId)
  local outcome = historyOutcome[code]
  if code == FIRE_RESULT.advanced then outcome = f.paused and 'skipped-paused' or 'skipped-catch-up' end
  if outcome then
    local rec
    if withTaskId[code] then
      rec = '{"triggerAt":' .. f.at .. atText .. outcome .. '","taskId":"' .. taskId .. '"' .. f.countText .. byText
    else
      rec = '{"triggerAt":' .. f.at .. atText .. outcome .. '"' .. f.countText .. byText
    end
    if redis.call('LPUSH', key, rec) >= historyLimit + historySlack then redis.call('LTRIM', key, 0, historyLimit - 1) end
  end
  if f.renew then redis.call('PEXPIRE', key, historyTtl) end
end
-- writes a trigger's task: to the stream, or as a delayed task (written at the flush) when it may start only later
local function toStream(id, taskType, payload, meta) addEntry(KEYS[1], id, taskType, payload, meta) end
-- (dueText: its due time as the caller sent it)
local function delayed(id, stored, dueText)
  delayedTasks[id] = stored
  delayedDue[id] = dueText
end
local function enqueueAt(dueAt, dueText)
  if not dueAt or dueAt <= now then return toStream end
  return function(id, taskType, payload, meta) delayed(id, scheduledForm(taskType, payload, meta) or cjson.encode({id, taskType, payload, meta}), dueText) end
end
-- the task of a schedule's last run under maxRuns (this enqueue reaches it): no newer trigger will be
-- enqueued, so none supersedes it (recovery/stale.ts): its meta's supersededAt goes (the key, not
-- raw in a string value of the meta, whose quotes are escaped; the payload after it is left alone)
local function lastRun(task)
  local i = string.find(task, '\n', 1, true)
  if not i then return task end
  return (string.gsub(string.sub(task, 1, i - 1), ',"' .. META.supersededAt .. '":%d+', '', 1)) .. string.sub(task, i)
end
-- a trigger's task "<meta>\n<payload>\n<type>" (ARGV) as meta, payload, type
local function splitTask(task)
  local i = string.find(task, '\n', 1, true)
  local j = string.find(task, '\n', i + 1, true)
  return string.sub(task, 1, i - 1), string.sub(task, i + 1, j - 1), string.sub(task, j + 1)
end
-- a trigger's fields text (ARGV, see above) parsed, with its numbers and its task id's suffix (the
-- unix seconds of its instant); nil when malformed. The triggers of a call mostly share theirs (a
-- burst: one instant, one generation, one dedup TTL), so each distinct text is parsed once
local parsed = {}
local function fieldsOf(text)
  local f = parsed[text]
  if f then return f end
  local at, ttl, mode, gen, live, due, max, historyFlag = string.match(text, '^(%S+) (%S+) (%S+) (%S+) (%S*) (%S*) (%S*) (%S*)$')
  if not at then return nil end
  local triggerAt = num(at)
  local flag, count = string.sub(historyFlag, 1, 1), string.sub(historyFlag, 2)
  f = {
    at = at, ttl = ttl, mode = mode, gen = gen, due = due,
    triggerAt = triggerAt, generation = num(gen), liveUntil = num(live) or math.huge, dueAt = num(due), maxRuns = num(max),
    unix = string.format('%d', math.floor(triggerAt / 1000)),
    -- the history flag: whether to record, the pause's skip, a TTL renewal, the record's count field
    history = historyFlag ~= '', paused = flag == 'p' or flag == 'P', renew = flag == 'R' or flag == 'P' or flag == 'C',
    countText = count ~= '' and (',"count":' .. count) or '',
  }
  parsed[text] = f
  return f
end
for a = 6, #ARGV, 3 do
  local schedule, task = ARGV[a], ARGV[a + 2]
  local f = fieldsOf(ARGV[a + 1])
  if not f then
    flush() -- the triggers before it are decided: their writes are kept whole
    return redis.error_reply('ERR fire: malformed trigger fields "' .. ARGV[a + 1] .. '"')
  end
  local at, ttl, mode, gen, due = f.at, f.ttl, f.mode, f.gen, f.due
  local triggerAt, generation, liveUntil, dueAt, maxRuns = f.triggerAt, f.generation, f.liveUntil, f.dueAt, f.maxRuns
  local taskId = schedule .. ':' .. f.unix
  local dedupKey = P .. 'dedup:' .. taskId
  local overlapKey, bufferKey, runsKey, historyKey
  if mode == FIRE_MODE.skipOverlap or mode == FIRE_MODE.bufferOne or mode == FIRE_MODE.cancelPrevious then overlapKey = P .. 'overlap:' .. schedule end
  if mode == FIRE_MODE.bufferOne then bufferKey = P .. 'buffered:' .. schedule end
  if maxRuns then runsKey = P .. 'runs:' .. schedule end
  if f.history then historyKey = P .. 'history:' .. schedule end
  local code
  local fence = generations[schedule] or storedGen[schedule]
  local last = lastFired[schedule] or storedLast[schedule]
  if generation < fence then
    code = FIRE_RESULT.fenced
  elseif mode ~= FIRE_MODE.advanceOnly and triggerAt > liveUntil then
    code = FIRE_RESULT.orphaned
  elseif triggerAt > now + lead then
    code = FIRE_RESULT.early
  elseif last >= triggerAt then
    code = FIRE_RESULT.stale
  elseif mode == FIRE_MODE.advanceOnly then
    code = FIRE_RESULT.advanced
    lastFired[schedule], lastFiredText[schedule] = triggerAt, at
  else
    local runs = 0
    if runsKey then
      if tonumber(redis.call('HGET', runsKey, 'max')) ~= maxRuns then redis.call('HSET', runsKey, 'max', maxRuns, 'n', 0) end
      runs = tonumber(redis.call('HGET', runsKey, 'n')) or 0
    end
    -- a delayed task's marker lives until it is due, and the usual while waiting past that
    local add, markerMs = enqueueAt(dueAt, due), MARKER_TTL.waitingMs + math.max(0, (dueAt or now) - now)
    if runsKey and runs + 1 == maxRuns then task = lastRun(task) end
    if runsKey and runs >= maxRuns then
      code = FIRE_RESULT.exhausted
    elseif redis.call('SET', dedupKey, taskId, 'NX', 'PX', ttl) then
      if mode == FIRE_MODE.bufferOne then
        local meta, payload, taskType = splitTask(task)
        code = FIRE_RESULT[fireBufferOne(add, KEYS[1], overlapKey, bufferKey, taskId, taskType, payload, meta, ttl, markerMs)]
      elseif mode == FIRE_MODE.cancelPrevious then
        local meta, payload, taskType = splitTask(task)
        code = FIRE_RESULT[fireCancelPrevious(add, overlapKey, taskId, taskType, payload, meta, markerMs)]
      elseif overlapKey and redis.call('EXISTS', overlapKey) == 1 then
        code = FIRE_RESULT.skipped
      else
        if add == toStream then
          local meta, payload, taskType = splitTask(task)
          addEntry(KEYS[1], taskId, taskType, payload, meta)
        else
          delayed(taskId, task, due) -- the task as given is its stored form
        end
        if overlapKey then redis.call('SET', overlapKey, taskId, 'PX', markerMs) end
        code = FIRE_RESULT.enqueued
      end
    else
      code = FIRE_RESULT.duplicate
    end
    if runsKey and (code == FIRE_RESULT.enqueued or code == FIRE_RESULT.buffered or code == FIRE_RESULT.superseding) then
      redis.call('HINCRBY', runsKey, 'n', 1)
    end
    lastFired[schedule], lastFiredText[schedule] = triggerAt, at
  end
  if generation > fence and code ~= FIRE_RESULT.fenced and code ~= FIRE_RESULT.orphaned then generations[schedule], generationText[schedule] = generation, gen end
  if historyKey then record(historyKey, f, code, taskId) end
  out[#out + 1] = code
end
flush()
out[#out + 1] = now
return out
