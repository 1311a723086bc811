-- @snippet markers: a task's markers (its uid and overlap keys: protocol.ts MARKER_TTL) name the task
-- while it is live and always carry a TTL. Its schedule's buffer key comes right after its overlap key
-- (codec.ts markerKeys; overlap.lua): the trigger waiting behind the task (overlap buffer-one). A
-- grouped task's markers end with the slot of its group (a <q>:group-running:<group> SET of entry ids:
-- the group-slots snippet), held while its entry is pending.
-- holdMarkers(keys, from, to, taskId, ttlMs) renews those of keys[from..to] that still name taskId to
--   ttlMs (ms), and a buffer waiting behind taskId to ttlMs plus its grace (a group slot is kept as it
--   is). Returns the id another task put in one of them instead (its overlap marker was taken by a
--   newer trigger: cancel-previous), or nil.
-- releaseMarkers(keys, from, to, taskId, stream, entryId) deletes those of keys[from..to] that still
--   name taskId; a buffer waiting behind taskId whose overlap marker it just released, or whose marker
--   ran out and no other task holds, starts then (its task is appended to stream and takes the
--   marker), whichever way the task ended; the group slot entryId holds is freed (entryId nil or '':
--   the task held none).
-- releaseGroupSlots(keys, from, to, entryId) frees only the group slot (a task that leaves the pending
--   entries list but stays live: a retry).
-- @include overlap
-- @include group-slots
local function holdMarkers(keys, from, to, taskId, ttlMs)
  local other
  for j = from, to do
    local v = not isGroupSlot(keys[j]) and redis.call('GET', keys[j])
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
local function releaseMarkers(keys, from, to, taskId, stream, entryId)
  local released
  for j = from, to do
    if isGroupSlot(keys[j]) then
      if entryId and entryId ~= '' then freeGroupSlot(keys[j], entryId) end
    else
      local v = redis.call('GET', keys[j])
      if v == taskId then
        redis.call('DEL', keys[j])
        released = j
      elseif v and j > from and bufferGraceMs(v, taskId) and (released == j - 1 or redis.call('EXISTS', keys[j - 1]) == 0) then
        -- its overlap marker just released, or run out while the task waited (a paused queue, a
        -- backlog past MARKER_TTL) and taken by no other task: the trigger waiting behind it starts
        startBuffered(stream, keys[j - 1], keys[j], v)
      end
    end
  end
end
local function releaseGroupSlots(keys, from, to, entryId)
  for j = from, to do
    if isGroupSlot(keys[j]) then freeGroupSlot(keys[j], entryId) end
  end
end
