-- @snippet stats: a queue's counts per minute (60), hour (24) and UTC day (8) in one STRING of u32
-- slots (layout: protocol.ts STATS; read by admin/history.ts), kept inside the scripts that already run
-- per batch, so counting costs no command of its own per task.
-- countStats(key, field, n, nowMs, ttlMs) adds n to `field` (STATS.processed, failed or lost) of the
--   current minute, hour and day: one BITFIELD (it sets the three stamps, reading the old ones, and
--   increments the three buckets). Only the first write of a new minute, hour or day does more: it
--   zeroes the buckets passed since the last write (at most 2 SETRANGE per ring) and, once a day,
--   renews the key's lifetime to ttlMs (ms). A write dated before the last one (two processes'
--   clocks) keeps the newer stamp.
-- rollStats(key, nowMs, ttlMs[, sampleStamp]) does that roll alone (sample-queue.lua) and returns the
--   minute, hour and day buckets of nowMs (epoch ms); with sampleStamp it also sets the sample stamp in
--   the same BITFIELD and returns the old one as `.sampled`.
-- statsSlot(ring, bucket, field) is the BITFIELD offset (`#i`) of a field of a bucket of a ring
--   (statsRings[1] minutes, [2] hours, [3] days).
local STATS = { stampMinute = 0, stampHour = 1, stampDay = 2, stampSample = 3, fields = 5, processed = 0, failed = 1, lost = 2, depth = 3, latency = 4, minutes = 60, hours = 24, days = 8, minuteBase = 8, hourBase = 308, dayBase = 428 } -- protocol.ts STATS
local statsRings = {
  { stamp = STATS.stampMinute, base = STATS.minuteBase, size = STATS.minutes, ms = 60000 },
  { stamp = STATS.stampHour, base = STATS.hourBase, size = STATS.hours, ms = 3600000 },
  { stamp = STATS.stampDay, base = STATS.dayBase, size = STATS.days, ms = 86400000 },
}
local function statsSlot(ring, bucket, field)
  return '#' .. (ring.base + (bucket % ring.size) * STATS.fields + field)
end
-- zeroes the buckets (from, to] of a ring, at most the whole ring
local function zeroBuckets(key, ring, from, to)
  local n = math.min(to - from, ring.size)
  local first = (to - n + 1) % ring.size
  local run = math.min(n, ring.size - first)
  redis.call('SETRANGE', key, (ring.base + first * STATS.fields) * 4, string.rep('\0', run * STATS.fields * 4))
  if n > run then redis.call('SETRANGE', key, ring.base * 4, string.rep('\0', (n - run) * STATS.fields * 4)) end
end
-- after a BITFIELD that set a ring's stamp to `now` (and added n to field, when given) and found `last`
local function settleRing(key, i, last, now, field, n, ttlMs)
  local ring = statsRings[i]
  if last < now then
    zeroBuckets(key, ring, last, now)
    if field then redis.call('BITFIELD', key, 'SET', 'u32', statsSlot(ring, now, field), n) end
    if i == 3 then redis.call('PEXPIRE', key, ttlMs) end
  else
    redis.call('BITFIELD', key, 'SET', 'u32', '#' .. ring.stamp, last)
    if field and now <= last - ring.size then
      -- older than the ring: the n landed in a current bucket; move it to the newest
      redis.call('BITFIELD', key, 'INCRBY', 'u32', statsSlot(ring, now, field), -n, 'INCRBY', 'u32', statsSlot(ring, last, field), n)
    end
  end
end
local function countStats(key, field, n, nowMs, ttlMs)
  local b, args = {}, {}
  for i, ring in ipairs(statsRings) do
    b[i] = math.floor(nowMs / ring.ms)
    args[#args + 1] = 'SET'
    args[#args + 1] = 'u32'
    args[#args + 1] = '#' .. ring.stamp
    args[#args + 1] = b[i]
  end
  for i, ring in ipairs(statsRings) do
    args[#args + 1] = 'INCRBY'
    args[#args + 1] = 'u32'
    args[#args + 1] = statsSlot(ring, b[i], field)
    args[#args + 1] = n
  end
  local old = redis.call('BITFIELD', key, unpack(args))
  for i = 1, 3 do
    if old[i] ~= b[i] then settleRing(key, i, old[i], b[i], field, n, ttlMs) end
  end
end
local function rollStats(key, nowMs, ttlMs, sampleStamp)
  local b = {}
  for i, ring in ipairs(statsRings) do b[i] = math.floor(nowMs / ring.ms) end
  local r = statsRings
  local args = {'SET', 'u32', '#' .. r[1].stamp, b[1], 'SET', 'u32', '#' .. r[2].stamp, b[2], 'SET', 'u32', '#' .. r[3].stamp, b[3]}
  if sampleStamp then
    args[#args + 1] = 'SET'
    args[#args + 1] = 'u32'
    args[#args + 1] = '#' .. STATS.stampSample
    args[#args + 1] = sampleStamp
  end
  local old = redis.call('BITFIELD', key, unpack(args))
  for i = 1, 3 do
    if old[i] ~= b[i] then settleRing(key, i, old[i], b[i], nil, 0, ttlMs) end
  end
  b.sampled = old[4]
  return b
end
