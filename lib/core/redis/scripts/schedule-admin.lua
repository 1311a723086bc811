--[[ schedule-admin
  Change the schedule registry at run time: put (add or replace a runtime schedule), delete,
  pause or resume. Every change takes a new registry version (a rising counter: max(INCR, Redis
  time ms), so it never decreases even when its key is lost), which is also the schedule's new
  `generation`, and is announced on the changes channel so the leader reloads at once. The
  caller then raises the generation in the queue's slot (fence-schedules.lua), so that fire.lua
  refuses a trigger planned under the old state even if the notice is lost.
  A replaced definition keeps registeredAt, paused and resumedAt; its changedAt (from when its
  triggers count) becomes Redis time when the spec, zone, offset, queue or bounds changed. A resume sets
  resumedAt: the triggers of the pause are skipped, not caught up. A put that changes only the
  labels (the `schedule-index` snippet's labelsOnly) keeps the schedule's generation and takes no
  version (the fence then raises nothing). The shard's indexes follow every change, and its due
  index: a put that may change the triggers and a resume mark the schedule "look at it now", a
  pause or a delete takes it out (the `schedule-index` snippet's dueFollows).
  KEYS[1]  <ns>:{<tag>}:schedules  HASH    name -> definition JSON (the schedule's shard: keys.ts ShardKeys)
  KEYS[2]  <ns>:{<tag>}:version    STRING  rising counter
  KEYS[3]  <ns>:{<tag>}:           prefix  the shard's key prefix: its indexes and due index are
                                           built on it (the `schedule-index` snippet)
  ARGV[1]  op                      "put" | "delete" | "pause" | "resume"
  ARGV[2]  name                    string
  ARGV[3]  channel                 <ns>:{<ns>:sched}:changes (a channel, not a key)
  ARGV[4]  notice                  what is published there: the shard's number
  ARGV[5?] definition JSON         string  (op "put" only; in the compact form, stored in it: the
                                           `stored-form` snippet, as a pause or resume keeps the form it finds)
  ARGV[6?] force                   "1": a put may replace a code-declared definition (op "put" only)
  Returns  {code, redisNowMs, generation, previous queue} (codes: protocol.ts ADMIN_RESULT): 1 done |
           0 notFound (no such schedule: nothing done) | 2 declared (a put over a definition declared
           in code, not a runtime one, without force: nothing done) | 3 unchanged (a pause of a paused
           schedule or a resume of one not paused: nothing done, no version taken, no notice, its
           generation as stored); the previous queue is the one the schedule targeted before the
           change ("" for a new schedule), where its generation is to be raised
]]
-- @include now-ms
-- @include rising-counter
-- @include schedule-timing
-- @include schedule-index
-- @include stored-form
local now = nowMs()
local op, name = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[1], name)
local old = cur and decodeStored(cur)
if op ~= 'put' and not old then return {0, now, 0, ''} end
-- a runtime put never turns a code-declared schedule into a runtime one unless forced (its code
-- would silently stop counting; it comes back when a declaring instance registers again)
if op == 'put' and old and old['runtime'] ~= true and ARGV[6] ~= '1' then return {2, now, 0, ''} end
-- a pause of a paused schedule, or a resume of a running one, changes nothing: said so, not done
-- again (a resume would move resumedAt, skipping the triggers a leader has yet to catch up)
if (op == 'pause' or op == 'resume') and (old['paused'] == true) == (op == 'pause') then
  return {3, now, storedGeneration(old) or 0, storedQueue(old)}
end
local def, generation
if op == 'put' then
  def = cjson.decode(ARGV[5])
  carryOver(def, old, now)
  -- (one without a generation, stored by an older version, takes one: the leader plans it under the registry version)
  if labelsOnly(old, def) and storedGeneration(old) then generation = storedGeneration(old) end
  dueFollows(KEYS[3], name, old, def, now)
elseif op == 'delete' then
  redis.call('HDEL', KEYS[1], name)
  redis.call('ZREM', KEYS[3] .. 'due', name)
else
  def = old
  def['paused'] = (op == 'pause')
  if op == 'resume' then
    def['resumedAt'] = now
    markDue(KEYS[3], name, now)
  else
    redis.call('ZREM', KEYS[3] .. 'due', name)
  end
end
generation = generation or risingCounter(KEYS[2], now)
scheduleIndexed(KEYS[3], name, old, def)
if def then
  def['generation'] = generation
  redis.call('HSET', KEYS[1], name, encodeStored(def))
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {1, now, generation, old and storedQueue(old) or ''}
