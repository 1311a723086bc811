-- @snippet schedule-index: the indexes of one shard of the schedule registry, on the shard's key
-- prefix P (keys.ts ShardKeys: `<ns>:{<tag>}:`, one slot): P..'index:names' ZSET every stored name,
-- score 0 (paged and prefix-filtered with ZRANGEBYLEX), P..'label:'..k..'='..v ZSET the names of
-- the schedules with label k = v, score 0, and P..'due' ZSET the due index (name -> wake instant,
-- epoch ms; docs/scheduler-shards.md). A definition is a decoded registry JSON (a table with
-- `labels`, an object of strings, absent for none), or nil/false for none.
-- scheduleIndexed(P, name, old, new) keeps the names and label indexes of one schedule after its
--   definition went from `old` (nil: it was not stored) to `new` (nil: deleted). Every script that
--   stores or deletes a definition calls it, in the same script, with the decoded definitions. O(labels · log N).
-- labelsOnly(old, new) is true when `new` replaces `old` with the same triggers, only the labels
--   changed (their `tfp`, else `fp`, fingerprints are equal): it keeps the generation, no fence.
-- markDue(P, name, now) marks a schedule "look at it now" in the due index: score -(now + 0.5), below
--   every wake instant (a leader writes non-negative integers, whatever its clock: Redis time or a
--   test's), so the next tick takes it, first; and never equal to a score a leader read before the
--   change (a mark already at or below it, from the same millisecond, is moved 1 further down).
--   protocol.ts SHARD_DUE.
-- markDueAll(P, names, now) marks each of `names` (a list of at most a few thousand) as markDue does,
--   with one ZMSCORE and one ZADD.
-- labelsIndexed(P, name, old, new, adds) is the label part of scheduleIndexed (the caller keeps the names
--   index); with a table `adds`, the ZADDs are left in it (label key -> {'0', name, …}: text, not formatted for each) for one ZADD per key.
-- dueFollows(P, name, old, new, now) keeps the due index after a stored definition changed from
--   `old` to `new` (nil: deleted): unplanned (removed) when deleted or paused; marked when it is new,
--   its triggers may have changed (not labelsOnly), or it was paused before; else left alone.
local function labelsIndexed(P, name, old, new, adds)
  local was = old and old['labels'] or {}
  local now = new and new['labels'] or {}
  for k, v in pairs(was) do
    if now[k] ~= v then redis.call('ZREM', P .. 'label:' .. k .. '=' .. v, name) end
  end
  for k, v in pairs(now) do
    if was[k] ~= v or not old then
      local key = P .. 'label:' .. k .. '=' .. v
      if adds then
        local list = adds[key]
        if not list then
          list = {}
          adds[key] = list
        end
        list[#list + 1] = '0'
        list[#list + 1] = name
      else
        redis.call('ZADD', key, 0, name)
      end
    end
  end
end
local function scheduleIndexed(P, name, old, new)
  labelsIndexed(P, name, old, new)
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
local function markDueAll(P, names, now)
  if #names == 0 then return end
  local v = -(now + 0.5)
  -- the mark as text, made once: a number argument would be formatted for each name
  local text = string.format('%.17g', v)
  local cur = redis.call('ZMSCORE', P .. 'due', unpack(names))
  local args = {}
  for i, name in ipairs(names) do
    local c = cur[i] and tonumber(cur[i])
    args[#args + 1] = (c and c < 0 and c <= v) and c - 1 or text
    args[#args + 1] = name
  end
  redis.call('ZADD', P .. 'due', unpack(args))
end
local function markDue(P, name, now)
  markDueAll(P, {name}, now)
end
local function dueFollows(P, name, old, new, now)
  if not new or new['paused'] == true then
    redis.call('ZREM', P .. 'due', name)
  elseif not old or old['paused'] == true or not labelsOnly(old, new) then
    markDue(P, name, now)
  end
end
