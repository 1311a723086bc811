-- @snippet markers: a task's markers (its uid and overlap keys: protocol.ts MARKER_TTL) name the task
-- while it is live and always carry a TTL. Its schedule's buffer key comes right after its overlap key
-- (codec.ts markerKeys; overlap.lua): the trigger waiting behind the task (overlap buffer-one).
-- holdMarkers(keys, from, to, taskId, ttlMs) renews those of keys[from..to] that still name taskId to
--   ttlMs (ms), and a buffer waiting behind taskId to ttlMs plus its grace. Returns the id another task
--   put in one of them instead (its overlap marker was taken by a newer trigger: cancel-previous), or nil.
-- releaseMarkers(keys, from, to, taskId, stream) deletes those of keys[from..to] that still name
--   taskId; a buffer waiting behind taskId whose overlap marker it just released starts then (its task
--   is appended to stream and takes the marker), whichever way the task ended.
-- @include overlap
local function holdMarkers(keys, from, to, taskId, ttlMs)
  local other
  for j = from, to do
    local v = redis.call('GET', keys[j])
    if v == taskId then
      redis.call('PEXPIRE', keys[j], ttlMs)
    elseif v and not string.find(v, '\n', 1, true) then
      other = other or v
    elseif v then
      local grace = bufferGraceMs(v, taskId)
      if grace then redis.call('PEXPIRE', keys[j], ttlMs + grace) end
    end
  end
  return other
end
local function releaseMarkers(keys, from, to, taskId, stream)
  local released
  for j = from, to do
    local v = redis.call('GET', keys[j])
    if v == taskId then
      redis.call('DEL', keys[j])
      released = j
    elseif v and released == j - 1 and bufferGraceMs(v, taskId) then
      startBuffered(stream, keys[j - 1], keys[j], v)
    end
  end
end
