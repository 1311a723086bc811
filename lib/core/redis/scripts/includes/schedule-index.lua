-- @snippet schedule-index: the indexes of the schedule registry, on the scheduler's key prefix P
-- (keys.ts SchedulerKeys: `<ns>:{<ns>:sched}:`, one slot): P..'index:names' ZSET every stored name,
-- score 0 (paged and prefix-filtered with ZRANGEBYLEX), and P..'label:'..k..'='..v ZSET the names
-- of the schedules with label k = v, score 0. A definition is a decoded registry JSON (a table with
-- `labels`, an object of strings, absent for none), or nil/false for none.
-- scheduleIndexed(P, name, old, new) keeps the indexes of one schedule after its definition went
--   from `old` (nil: it was not stored) to `new` (nil: deleted). Every script that stores or deletes
--   a definition calls it, in the same script, with the decoded definitions. O(labels · log N).
-- labelsOnly(old, new) is true when `new` replaces `old` with the same triggers, only the labels
--   changed (their `tfp`, else `fp`, fingerprints are equal): it keeps the generation, no fence.
local function scheduleIndexed(P, name, old, new)
  local was = old and old['labels'] or {}
  local now = new and new['labels'] or {}
  for k, v in pairs(was) do
    if now[k] ~= v then redis.call('ZREM', P .. 'label:' .. k .. '=' .. v, name) end
  end
  for k, v in pairs(now) do
    if was[k] ~= v or not old then redis.call('ZADD', P .. 'label:' .. k .. '=' .. v, 0, name) end
  end
  if new then
    redis.call('ZADD', P .. 'index:names', 0, name)
  elseif old then
    redis.call('ZREM', P .. 'index:names', name)
  end
end
local function labelsOnly(old, new)
  if not old or not new then return false end
  return (old['tfp'] or old['fp']) == (new['tfp'] or new['fp'])
end
