/**
 * What the leader logs and emits about one schedule's plan (plan.ts) at a tick: the triggers
 * skipped while paused and while orphaned (each span reported once, even if a fire is retried or
 * the table reloaded), a catch-up, and the triggers the catch-up rules skipped. Units: epoch ms.
 */
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import type { Entry } from './due-entry.js';
import type { Plan } from './plan.js';

/** Reports plans, remembering which paused and orphaned spans were reported. */
export class PlanReports {
  /** Schedule → the resume whose skipped triggers were reported. */
  private readonly pauseReported = new Map<string, number>();
  /** Schedule → the orphaned-since instant whose skipped triggers were reported. */
  private readonly orphanReported = new Map<string, number>();

  constructor(
    private readonly logger: ChronosLogger,
    private readonly events: EventBus,
  ) {}

  /** Logs and emits what plan `p` of entry `e` skipped or catches up. */
  report(e: Entry, p: Plan): void {
    const s = e.stored;
    if (p.paused && this.pauseReported.get(s.name) !== s.resumedAt) {
      this.pauseReported.set(s.name, s.resumedAt!);
      this.logger.warn(`Skipped ${p.paused.count} trigger(s) while paused (schedule=${s.name} resumedAt=${s.resumedAt})`);
      const { newest: triggerAt, count } = p.paused;
      this.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'pause', count });
    }
    const since = e.orphanSpan?.since;
    if (p.orphaned && since !== undefined && this.orphanReported.get(s.name) !== since) {
      this.orphanReported.set(s.name, since);
      const { newest: triggerAt, count } = p.orphaned;
      this.logger.warn(`Skipped ${count} trigger(s) while orphaned (schedule=${s.name} orphanedSince=${since})`);
      this.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'orphaned', count });
    }
    if (p.catchingUp && p.catchingUp.kept > 0) {
      const { kept, count, oldestLateMs } = p.catchingUp;
      const what = `schedule=${s.name} catchUp=${s.catchUp} oldestLateMs=${oldestLateMs}`;
      this.logger.log(`Catching up ${kept} of ${count} missed trigger(s) (${what})`);
    }
    if (p.skipped > 0) {
      this.logger.warn(
        `Skipped ${p.skipped} missed trigger(s) ` +
          `(schedule=${s.name} catchUp=${s.catchUp} catchUpWindowMs=${s.catchUpWindowMs} catchUpCap=${s.catchUpCap})`,
      );
      this.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt: p.skippedAt, reason: 'catch-up', count: p.skipped });
    }
  }
}

/**
 * fire.lua refused a trigger as planned under an older generation of its schedule: the schedule
 * was paused, removed or changed and the notice has not come (or was lost). Reloads once per
 * registry version loaded; refused again under the same version, it says so once and waits for
 * the next change.
 */
export function fencedNote(schedule: string, trigger: string, again: boolean): string {
  return again
    ? `Trigger refused again after a reload: the queue holds a newer generation of the schedule than the registry; ` +
        `waiting for the next registry change (schedule=${schedule} trigger=${trigger})`
    : `Trigger refused: the schedule changed since it was loaded; reloading (schedule=${schedule} trigger=${trigger})`;
}
