-- @snippet group-slots: the slots of a queue's groups. A grouped task holds one from its hand-out
-- (fetch-limited.lua adds its entry id to <q>:group-running:<group>, a SET) until its entry leaves the
-- pending entries list; each exit path frees it. Freeing a slot of a group held back by its concurrency
-- limit makes it due for a look (its score in <q>:groups-parked becomes 0).
-- isGroupSlot(key) is true for a <q>:group-running:<group> key (keys.ts QueueKeys.groupRunning), not for a
--   marker key whose task id or dedup key holds that text.
-- freeGroupSlot(key, entryId) frees the slot entryId holds in that group; the group and its queue's
--   groups-parked key are read off the key (its hash tag ends at the first "}": queue and namespace
--   names hold none).
-- groupSlotOf(prefix, meta) is the group-running key of a task given its queue's key prefix and its
--   meta JSON text (field g: protocol.ts META), nil for an ungrouped task.
-- @include task-meta
local function isGroupSlot(key)
  -- right after the hash tag (its first "}"): a task id or dedup key in a marker key may hold the text too
  local i = string.find(key, '}', 1, true)
  return i ~= nil and string.sub(key, i, i + 15) == '}:group-running:'
end
local function freeGroupSlot(key, entryId)
  if redis.call('SREM', key, entryId) == 1 then
    local i = string.find(key, '}:group-running:', 1, true)
    redis.call('ZADD', string.sub(key, 1, i + 1) .. 'groups-parked', 'XX', 0, string.sub(key, i + 16))
  end
end
local function groupSlotOf(prefix, meta)
  if not meta or not string.find(meta, '"g":', 1, true) then return nil end
  local m = decodeMeta(meta)
  if m and type(m['g']) == 'string' and m['g'] ~= '' then return prefix .. 'group-running:' .. m['g'] end
  return nil
end
