--[[ enqueue
  Enqueue one task with a dedup key and/or a unique task id, now or at a later time.
  (A plain immediate enqueue is a bare XADD and does not use this script.) A dedup key has a mode:
  "f" first (the first task wins while the key lives: the others are deduplicated), "d" debounce and
  "r" replace: while the key's task still waits for its time in the scheduled set, the new enqueue
  replaces it (type, payload and meta; its id stays) and, in debounce, moves its time to this
  enqueue's (now + delay); once it has left the scheduled set (due, running, done) a new task is
  enqueued and the key names it. The key of "d" and "r" lives ttl, and at least until its task is due.
  KEYS[1]   <ns>:{<ns>:<q>}:stream       STREAM  ready tasks
  KEYS[2]   <ns>:{<ns>:<q>}:scheduled    ZSET    task id -> process-at (epoch ms)
  KEYS[3]   <ns>:{<ns>:<q>}:tasks        HASH    task id -> encoded task: "<meta>\n<payload>\n<type>" (task-entry scheduledForm)
  KEYS[4?]  <ns>:{<ns>:<q>}:dedup:<key>  STRING  present when ARGV[6] > 0
  KEYS[4|5?] <ns>:{<ns>:<q>}:uid:<id>    STRING  present when ARGV[7] == "1"; its TTL covers the wait until
            processAt and MARKER_TTL.waitingMs past it (protocol.ts MARKER_TTL)
  KEYS[4|5|6?] <ns>:{<ns>:<q>}:         prefix  present with a dedup key or a unique id (after them): the queue's
            key prefix, never a key; stateOf builds the retry, dead and uid keys on it. Declared so
            that while the slot migrates Redis refuses the call (TRYAGAIN) before it runs, rather
            than fail it at a built key absent from the node (Redis Cluster: `non local key`)
  ARGV[1]   task id                      string
  ARGV[2]   task type                    string
  ARGV[3]   payload                      string  JSON text
  ARGV[4]   meta                         string  JSON text (fields: protocol.ts META)
  ARGV[5]   processAtMs                  integer epoch ms; 0 = not given
  ARGV[6]   dedupTtlMs                   integer ms; 0 = no dedup key
  ARGV[7]   unique id                    "1" | "0"
  ARGV[8]   delayMs                      integer ms from now by Redis server time; 0 = not given
  ARGV[9]   dedup mode                   "f" first | "d" debounce | "r" replace (only with a dedup key)
  Returns   {code, id} (codes: protocol.ts ENQUEUE_RESULT): {1 enqueued, id} ready in the stream |
            {2 scheduled, id} | {0 deduplicated, existingId, state} | {3 replaced, existingId} (the key's waiting task was replaced)
  state     of the existing task: "scheduled" | "retry" | "dead" (in that set) | "pending" (in none: in the stream,
            ready or running — which, only a scan of the stream tells — or, under a dedup key that outlives its task, done)
]]
-- @include now-ms
-- @include task-entry
local ENQUEUE_RESULT = { deduplicated = 0, enqueued = 1, scheduled = 2, replaced = 3 } -- protocol.ts ENQUEUE_RESULT
local MARKER_TTL = { waitingMs = 3600000 } -- protocol.ts MARKER_TTL
local k = 4
local dedupKey, uidKey
if tonumber(ARGV[6]) > 0 then dedupKey = KEYS[k]; k = k + 1 end
if ARGV[7] == '1' then uidKey = KEYS[k]; k = k + 1 end
local prefix = KEYS[k]
local mode = ARGV[9] or 'f'
local processAt = tonumber(ARGV[5])
local delay = tonumber(ARGV[8])
local now = (delay > 0 or (uidKey and processAt > 0) or mode ~= 'f') and nowMs() or 0
if delay > 0 then processAt = now + delay end
-- how long the key of a debounce/replace task lives: ttl, and at least until the task is due
local function keyTtl(dueAt)
  return math.max(tonumber(ARGV[6]), dueAt - now)
end
-- where a deduplicating task is now (the reply's third element). The retry and dead sets are read only
-- here, on a deduplicated enqueue: their names are built on the queue prefix (one hash tag, so one
-- slot, as fire.lua builds its keys) rather than sent with every enqueue. A dead task's id may be used
-- again by a live one (an explicit task id, whose uid marker the dead one let go): the live one is the
-- answer then, so `dead` only when no live task holds the id's uid marker.
local function stateOf(id)
  if redis.call('ZSCORE', KEYS[2], id) then return 'scheduled' end
  if redis.call('ZSCORE', prefix .. 'retry', id) then return 'retry' end
  if redis.call('ZSCORE', prefix .. 'dead', id) and redis.call('EXISTS', prefix .. 'uid:' .. id) == 0 then return 'dead' end
  return 'pending'
end
if dedupKey then
  local existing = redis.call('GET', dedupKey)
  if existing and mode == 'f' then return {ENQUEUE_RESULT.deduplicated, existing, stateOf(existing)} end
  if existing then
    local due = tonumber(redis.call('ZSCORE', KEYS[2], existing))
    if due then
      -- the key's task still waits for its time: replaced in place (its id stays)
      if mode == 'd' then due = processAt > 0 and processAt or now end
      redis.call('HSET', KEYS[3], existing, scheduledForm(ARGV[2], ARGV[3], ARGV[4]) or cjson.encode({existing, ARGV[2], ARGV[3], ARGV[4]}))
      redis.call('ZADD', KEYS[2], due, existing)
      redis.call('PEXPIRE', dedupKey, keyTtl(due))
      return {ENQUEUE_RESULT.replaced, existing}
    end
  end
end
if uidKey then
  local ttl = math.max(processAt - now, 0) + MARKER_TTL.waitingMs
  if not redis.call('SET', uidKey, ARGV[1], 'NX', 'PX', ttl) then return {ENQUEUE_RESULT.deduplicated, ARGV[1], stateOf(ARGV[1])} end
end
if dedupKey then redis.call('SET', dedupKey, ARGV[1], 'PX', mode == 'f' and ARGV[6] or keyTtl(processAt)) end
if processAt > 0 then
  redis.call('HSET', KEYS[3], ARGV[1], scheduledForm(ARGV[2], ARGV[3], ARGV[4]) or cjson.encode({ARGV[1], ARGV[2], ARGV[3], ARGV[4]}))
  redis.call('ZADD', KEYS[2], processAt, ARGV[1])
  return {ENQUEUE_RESULT.scheduled, ARGV[1]}
end
addEntry(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return {ENQUEUE_RESULT.enqueued, ARGV[1]}
