-- @snippet reclaim-entries: reclaimEntries(stream, reclaimedKey, group, entries, maxDeliveries, now,
-- requeued, poison, lost, prefix) handles entries a recoverer took from their consumer (XAUTOCLAIM or XCLAIM
-- replies: {entry id, fields}): each goes back to the end of the stream as a new entry with its crash
-- counted in its meta (crashes) and the slot of its group freed (prefix: the queue's key prefix;
-- it comes back into its group through the stream), or, reclaimed more than maxDeliveries times, stays pending for the
-- recoverer as poison (to kill); an entry without fields (deleted, Redis < 7.0) is acked and lost.
-- Both are remembered in reclaimedKey (bounded: protocol.ts RECLAIMED_MEMORY). Appends to the three
-- result lists. Entry fields: protocol.ts ENTRY_FIELDS; meta fields: protocol.ts META.
local META = { crashes = 'c', lastError = 'le', failedAt = 'fa', deadReason = 'rs' } -- protocol.ts META
local DEAD_REASON = { poison = 'poison' } -- protocol.ts DEAD_REASON
local RECLAIMED_MEMORY = { keepMs = 86400000, keepCount = 10000 } -- protocol.ts RECLAIMED_MEMORY
-- @include group-slots
-- @include task-meta
local function reclaimEntries(stream, reclaimedKey, group, entries, maxDeliveries, now, requeued, poison, lost, prefix)
  local taken = 0
  for _, e in ipairs(entries) do
    local entryId, fields = e[1], e[2]
    if not fields then
      lost[#lost + 1] = entryId -- Redis < 7.0: a deleted entry comes back without fields
      redis.call('XACK', stream, group, entryId)
    else
      local f = {}
      for i = 1, #fields, 2 do f[fields[i]] = fields[i + 1] end
      local meta = decodeMeta(f['meta'] or '') or {}
      local crashes = (tonumber(meta[META.crashes]) or 0) + 1
      meta[META.crashes] = crashes
      local taskId = f['id'] or entryId
      redis.call('ZADD', reclaimedKey, now, entryId)
      taken = taken + 1
      if crashes > maxDeliveries then
        meta[META.lastError] = 'poison: delivered ' .. crashes
          .. ' times without finishing (reclaimed from a crashed or unresponsive consumer each time)'
        meta[META.failedAt] = now
        meta[META.deadReason] = DEAD_REASON.poison
        poison[#poison + 1] = {entryId, cjson.encode({taskId, f['type'] or '', f['payload'] or '', cjson.encode(meta)})}
      else
        local copy = {}
        for i = 1, #fields, 2 do
          copy[#copy + 1] = fields[i]
          if fields[i] == 'meta' then copy[#copy + 1] = cjson.encode(meta) else copy[#copy + 1] = fields[i + 1] end
        end
        if not f['meta'] then copy[#copy + 1] = 'meta'; copy[#copy + 1] = cjson.encode(meta) end
        redis.call('XADD', stream, '*', unpack(copy))
        local slot = groupSlotOf(prefix, f['meta'])
        if slot then freeGroupSlot(slot, entryId) end
        redis.call('XACK', stream, group, entryId)
        redis.call('XDEL', stream, entryId)
        requeued[#requeued + 1] = {taskId, f['type'] or '', cjson.encode(meta)}
      end
    end
  end
  if taken > 0 then
    redis.call('ZREMRANGEBYSCORE', reclaimedKey, '-inf', now - RECLAIMED_MEMORY.keepMs)
    redis.call('ZREMRANGEBYRANK', reclaimedKey, 0, -RECLAIMED_MEMORY.keepCount - 1)
    redis.call('PEXPIRE', reclaimedKey, RECLAIMED_MEMORY.keepMs)
  end
end
