-- @snippet schedule-timing: carryOver(def, old, nowMs) fills in what a new definition of a schedule
-- keeps from the stored one `old` (nil when there is none): registeredAt, paused and resumedAt are
-- kept; changedAt, the instant from which its triggers count, is nowMs for a new schedule and when
-- the spec, zone, offset or queue changed (a new spec takes effect when it is stored), else kept.
local function carryOver(def, old, nowMs)
  if not old then
    def['registeredAt'] = nowMs
    def['changedAt'] = nowMs
    return
  end
  def['registeredAt'] = old['registeredAt']
  def['paused'] = old['paused']
  def['resumedAt'] = old['resumedAt']
  local same = old['expression'] == def['expression'] and old['timeZone'] == def['timeZone']
    and (old['offsetMs'] or 0) == (def['offsetMs'] or 0) and old['queue'] == def['queue']
  def['changedAt'] = same and old['changedAt'] or nowMs
end
