-- @snippet now-ms: nowMs() is the Redis server time, epoch ms; nowMsUs() the same and the microseconds past it (0–999).
local function nowMsUs()
  local t = redis.call('TIME')
  local us = tonumber(t[2])
  return tonumber(t[1]) * 1000 + math.floor(us / 1000), us % 1000
end
local function nowMs()
  return (nowMsUs())
end
