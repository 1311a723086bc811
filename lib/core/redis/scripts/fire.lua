--[[ fire
  Enqueue schedule triggers that target one queue, each at most once ever: per trigger, SET NX
  of its dedup key <schedule>:<trigger-unix>, the enqueue, and the advance of lastFired happen
  together. A trigger may be enqueued at most `leadMs` before its instant by Redis server time
  (workers hold such a task and start it at the instant); one further ahead is refused, so a
  leader with a fast clock can never fire early. A trigger planned under an older generation of
  its schedule than the one stored beside lastFired (the schedule was paused, removed or changed
  since the leader loaded it) is refused too; an accepted one raises the stored generation to its own.
  KEYS[1]   <ns>:{<ns>:<q>}:stream              STREAM
  KEYS[2]   <ns>:{<ns>:<q>}:last-fired          HASH   schedule name -> lastFired (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:generation          HASH   schedule name -> generation (fence-schedules.lua)
  KEYS[4..] per trigger: its dedup key <ns>:{<ns>:<q>}:dedup:<schedule>:<trigger-unix>, then,
            when its mode is "s", "b" or "c", the overlap key <ns>:{<ns>:<q>}:overlap:<schedule> (set with a
            TTL: protocol.ts MARKER_TTL), then, when it is "b", the buffer key
            <ns>:{<ns>:<q>}:buffered:<schedule> (overlap.lua)
  ARGV[1]   nowMs: "" to decide by Redis server time (always, outside tests), or a test clock's
            epoch ms
  ARGV[2]   leadMs: how long before its instant a trigger may be enqueued, ms
  ARGV[3..] per trigger, 10 values: schedule name, triggerAtMs (epoch ms), task id, task type,
            payload (JSON text), meta (JSON text, fields: protocol.ts META), dedupTtlMs (ms), mode
            (modes: protocol.ts FIRE_MODE): "a" enqueue (overlap allowed) | "s" enqueue unless the
            schedule's previous task is live (overlap skip) | "b" enqueue, or while the previous task is
            live keep it in the buffer key unless one waits there (overlap buffer-one) | "c" enqueue,
            taking the overlap marker from the previous task (overlap cancel-previous) | "x" only
            advance lastFired (a trigger skipped by the catch-up policy), the schedule's generation it
            was planned under, and
            its liveUntil (epoch ms, Redis time; "" = none): until when a live instance declares
            the schedule, by the leader's last liveness read (a stale read only makes it earlier).
            A trigger dated after it is refused in the enqueue modes: no trigger after the
            instant the schedule became orphaned is ever enqueued.
  Returns   one code per trigger (codes: protocol.ts FIRE_RESULT): 1 enqueued | 0 duplicate (fired
            before) | 2 skipped (overlap: the previous task of the schedule is still live) | 3 early
            (more than leadMs ahead) | 4 stale (at or before lastFired) | 5 advanced (mode x) |
            6 fenced (planned under an older generation) | 7 orphaned (dated after liveUntil) | 8 buffered
            (mode b: it starts when the previous task ends) | 9 superseding (mode c: enqueued, the
            previous task was live and is superseded); then "now" (epoch ms) as the last element
]]
-- @include now-ms
-- @include task-entry
-- @include overlap
local FIRE_MODE = { allowOverlap = 'a', skipOverlap = 's', bufferOne = 'b', cancelPrevious = 'c', advanceOnly = 'x' } -- protocol.ts FIRE_MODE
local FIRE_RESULT = { duplicate = 0, enqueued = 1, skipped = 2, early = 3, stale = 4, advanced = 5, fenced = 6, orphaned = 7, buffered = 8, superseding = 9 } -- protocol.ts FIRE_RESULT
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
local now = tonumber(ARGV[1]) or nowMs()
local lead = tonumber(ARGV[2])
local out = {}
local k = 4
for a = 3, #ARGV, 10 do
  local schedule, triggerAt, taskId = ARGV[a], tonumber(ARGV[a + 1]), ARGV[a + 2]
  local ttl, mode, generation = ARGV[a + 6], ARGV[a + 7], tonumber(ARGV[a + 8])
  local liveUntil = tonumber(ARGV[a + 9]) or math.huge
  local dedupKey = KEYS[k]
  local overlapKey, bufferKey
  k = k + 1
  if mode == FIRE_MODE.skipOverlap or mode == FIRE_MODE.bufferOne or mode == FIRE_MODE.cancelPrevious then
    overlapKey = KEYS[k]
    k = k + 1
  end
  if mode == FIRE_MODE.bufferOne then bufferKey = KEYS[k]; k = k + 1 end
  local code
  local fence = tonumber(redis.call('HGET', KEYS[3], schedule) or '0')
  local last = tonumber(redis.call('HGET', KEYS[2], schedule) or '-1')
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
    redis.call('HSET', KEYS[2], schedule, triggerAt)
  else
    if redis.call('SET', dedupKey, taskId, 'NX', 'PX', ttl) then
      if mode == FIRE_MODE.bufferOne then
        code = FIRE_RESULT[fireBufferOne(KEYS[1], overlapKey, bufferKey, taskId, ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ttl)]
      elseif mode == FIRE_MODE.cancelPrevious then
        code = FIRE_RESULT[fireCancelPrevious(KEYS[1], overlapKey, taskId, ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])]
      elseif overlapKey and redis.call('EXISTS', overlapKey) == 1 then
        code = FIRE_RESULT.skipped
      else
        addEntry(KEYS[1], taskId, ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
        if overlapKey then redis.call('SET', overlapKey, taskId, 'PX', MARKER_TTL.waitingMs) end
        code = FIRE_RESULT.enqueued
      end
    else
      code = FIRE_RESULT.duplicate
    end
    redis.call('HSET', KEYS[2], schedule, triggerAt)
  end
  if generation > fence and code ~= FIRE_RESULT.fenced and code ~= FIRE_RESULT.orphaned then redis.call('HSET', KEYS[3], schedule, generation) end
  out[#out + 1] = code
end
out[#out + 1] = now
return out
