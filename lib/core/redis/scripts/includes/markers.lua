-- @snippet markers: a task's markers name the task while it is live: its uid and overlap keys (STRINGs
-- holding its id, always with a TTL: protocol.ts MARKER_TTL) and, for a grouped task, the slot of its
-- group (a <q>:group-running:<group> SET of entry ids: the group-slots snippet), held while its entry
-- is pending.
-- holdMarkers(keys, from, to, taskId, ttlMs) renews those of keys[from..to] that still name taskId to ttlMs (ms);
--   a group slot is kept as it is.
-- releaseMarkers(keys, from, to, taskId, entryId) deletes those of keys[from..to] that still name taskId
--   and frees the group slot entryId holds (entryId nil or '': the task held none).
-- releaseGroupSlots(keys, from, to, entryId) frees only the group slot (a task that leaves the pending
--   entries list but stays live: a retry).
-- @include group-slots
local function holdMarkers(keys, from, to, taskId, ttlMs)
  for j = from, to do
    if not isGroupSlot(keys[j]) and redis.call('GET', keys[j]) == taskId then redis.call('PEXPIRE', keys[j], ttlMs) end
  end
end
local function releaseMarkers(keys, from, to, taskId, entryId)
  for j = from, to do
    if isGroupSlot(keys[j]) then
      if entryId and entryId ~= '' then freeGroupSlot(keys[j], entryId) end
    elseif redis.call('GET', keys[j]) == taskId then
      redis.call('DEL', keys[j])
    end
  end
end
local function releaseGroupSlots(keys, from, to, entryId)
  for j = from, to do
    if isGroupSlot(keys[j]) then freeGroupSlot(keys[j], entryId) end
  end
end
