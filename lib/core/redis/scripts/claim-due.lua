--[[ claim-due
  Claim, in the due-time index, the queues of one worker server whose delayed or retry tasks are due
  (score <= Redis time), and tell when the next of its queues is due. A claimed queue's score becomes
  this round's claim mark (protocol.ts DUE_INDEX claimBase + Redis time, above every due time): an
  enqueuer's `ZADD LT` of a new due time replaces the mark, so settle-due.lua can tell a queue that got
  a new delayed task while it was being forwarded from one that did not. The index is a hint kept
  low: a score at or before a queue's earliest due time (too early costs one empty forward.lua).
  Reads the index from its lowest score, limit + 64 rows; when that many rows come back (queues of
  other servers, or of no live server, overdue ahead of this server's), it looks its own queues up by
  name (ZMSCORE) instead: a range cut short must not hide them (it did: their scores stayed in the
  past, a later delayed task lowered nothing, published no wake and waited for the 5-minute sweep).
  KEYS[1]  <ns>:{<ns>:global}:due  ZSET    queue name -> earliest due time (epoch ms) or a claim mark
  ARGV[1]  limit                   integer most queues claimed per call
  ARGV[2]  claimBase               integer protocol.ts DUE_INDEX.claimBase
  ARGV[3..] queue names            string  the queues this server serves
  Returns  {nowMs (Redis time), mark, nextDueMs (-1 when none of them is waiting: protocol.ts NONE_DUE), claimed queue names...}
]]
-- @include now-ms
local now = nowMs()
local limit = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local mark = base + now
local served = {}
for i = 3, #ARGV do served[ARGV[i]] = true end
-- ascending: the due queues first, then the next ones waiting (claim marks are above base: left out)
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. base, 'WITHSCORES', 'LIMIT', 0, limit + 64)
local out = {now, mark, -1}
local marks = {}
local function take(q, score)
  if score <= now then
    if #marks < 2 * limit then
      marks[#marks + 1] = mark
      marks[#marks + 1] = q
      out[#out + 1] = q
    end
  elseif out[3] < 0 or score < out[3] then
    out[3] = score
  end
end
if #rows < 2 * (limit + 64) then
  -- every queue below the marks is in `rows`, ascending: the first served one after `now` is the next due
  for i = 1, #rows, 2 do
    local q, score = rows[i], tonumber(rows[i + 1])
    if served[q] then
      take(q, score)
      if score > now then break end
    end
  end
else
  -- cut short: this server's queues by name (chunks of 1000: unpack's stack)
  for from = 3, #ARGV, 1000 do
    local upto = math.min(#ARGV, from + 999)
    local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, from, upto))
    for i = from, upto do
      local score = tonumber(scores[i - from + 1])
      if score and score < base then take(ARGV[i], score) end
    end
  end
end
if #marks > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(marks)) end
return out
