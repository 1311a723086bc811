-- @snippet schedule-timing: carryOver(def, old, nowMs) fills in what a new definition of a schedule
-- keeps from the stored one `old` (nil when there is none): registeredAt, paused and resumedAt are
-- kept; changedAt, the instant from which its triggers count, is nowMs for a new schedule and when
-- the spec, zone, offset, queue or bounds (startAt, endAt, maxRuns) changed (a new spec takes effect
-- when it is stored: a trigger dated before is not caught up, even one a new bound lets in), else kept.
-- Either definition may be in either stored form (the `stored-form` snippet).
-- @include stored-form
local function carryOver(def, old, nowMs)
  if not old then
    def['registeredAt'] = nowMs
    def['changedAt'] = nowMs
    return
  end
  def['registeredAt'] = old['registeredAt']
  def['paused'] = old['paused']
  def['resumedAt'] = old['resumedAt']
  def['changedAt'] = sameTiming(old, def) and storedChangedAt(old) or nowMs
end
