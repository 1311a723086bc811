--[[ claim
  Keep the claims of one consumer fresh and renew the markers of the tasks it holds: each entry
  still pending for this consumer gets `XCLAIM … 0 … JUSTID` (its idle time is reset, so a long
  handler is not reclaimed) and its task's markers are renewed to markerTtlMs; a task one of whose
  markers names another task now (under cancel-previous: a newer trigger took the overlap marker,
  the task is superseded even if the leader's notice was lost) is reported. An entry that is not
  pending for this consumer any more (a recoverer took it) is left alone; one not pending for any
  consumer (acked or dead-lettered by someone else: an operator's cancel) is reported ended, for the
  caller to look at its task (a cancel notice it may have missed). An entry still pending
  whose stream entry is gone (XDEL, a trim) is left pending and untouched: XCLAIM would drop it from
  the pending entries list without a trace; recover.lua reports it lost if its task never finishes.
  KEYS[1]   <ns>:{<ns>:<q>}:stream  STREAM
  KEYS[2..] per flagged task, its markers (codec.ts markerKeys: uid, overlap, buffer keys), in the order
            ARGV lists them
  ARGV[1]   group                   string
  ARGV[2]   consumer                string  this server
  ARGV[3]   markerTtlMs             integer ms: the renewed lifetime of the markers
  ARGV[4]   P: number of plain entry ids  integer
  ARGV[5 .. 4+P]  plain entry ids (no markers)
  then per flagged task: entry id, task id, n (its keys are the next n of KEYS[2..])
  Returns   {{entry ids claimed}, {entry ids pending whose stream entry is gone}, {{entry id, the other
            task id} per claimed task one of whose markers names another task}, {entry ids pending for
            no consumer}}
]]
-- @include markers
local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local claimed, gone, taken, ended = {}, {}, {}, {}
local function claim(entry)
  if not redis.call('XPENDING', stream, group, entry, entry, 1, consumer)[1] then
    if not redis.call('XPENDING', stream, group, entry, entry, 1)[1] then ended[#ended + 1] = entry end
    return false
  end
  if not redis.call('XRANGE', stream, entry, entry)[1] then
    gone[#gone + 1] = entry
    return false
  end
  redis.call('XCLAIM', stream, group, consumer, 0, entry, 'JUSTID')
  claimed[#claimed + 1] = entry
  return true
end
local p = tonumber(ARGV[4])
for i = 1, p do claim(ARGV[4 + i]) end
local a = 5 + p
local k = 2
while a <= #ARGV do
  local entry, taskId, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  if claim(entry) then
    local other = holdMarkers(KEYS, k, k + n - 1, taskId, ARGV[3])
    if other then taken[#taken + 1] = {entry, other} end
  end
  k = k + n
  a = a + 3
end
return {claimed, gone, taken, ended}
