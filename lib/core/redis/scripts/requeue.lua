--[[ requeue
  Put tasks this consumer holds straight back at the end of the stream (graceful shutdown of a
  server whose handlers did not finish in time), without counting a failure or a crash.
  KEYS[1]  <ns>:{<ns>:<q>}:stream  STREAM
  KEYS[2]  <ns>:{<ns>:<q>}:        prefix  the queue's key prefix: a grouped task's group slot
                                          (<q>:group-running:<group>) is freed (it comes back into its group)
  ARGV[1]  group                   string
  ARGV[2..] entry ids              the entries to give back
  Returns  number of entries put back (ids no longer pending for this group are skipped)
]]
-- @include group-slots
local n = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('XACK', KEYS[1], ARGV[1], id) == 1 then
    local e = redis.call('XRANGE', KEYS[1], id, id)
    if e[1] then
      redis.call('XADD', KEYS[1], '*', unpack(e[1][2]))
      local fields = e[1][2]
      for j = 1, #fields, 2 do
        if fields[j] == 'meta' then
          local slot = groupSlotOf(KEYS[2], fields[j + 1])
          if slot then freeGroupSlot(slot, id) end
        end
      end
      n = n + 1
    end
    redis.call('XDEL', KEYS[1], id)
  end
end
return n
