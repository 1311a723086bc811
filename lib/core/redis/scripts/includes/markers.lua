-- @snippet markers: a task's markers (its uid and overlap keys: protocol.ts MARKER_TTL) name the task
-- while it is live and always carry a TTL.
-- holdMarkers(keys, from, to, taskId, ttlMs) renews those of keys[from..to] that still name taskId to ttlMs (ms).
-- releaseMarkers(keys, from, to, taskId) deletes those of keys[from..to] that still name taskId.
local function holdMarkers(keys, from, to, taskId, ttlMs)
  for j = from, to do
    if redis.call('GET', keys[j]) == taskId then redis.call('PEXPIRE', keys[j], ttlMs) end
  end
end
local function releaseMarkers(keys, from, to, taskId)
  for j = from, to do
    if redis.call('GET', keys[j]) == taskId then redis.call('DEL', keys[j]) end
  end
end
