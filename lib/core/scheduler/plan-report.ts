/**
 * What the leader logs and emits about one schedule's plan (plan.ts) at a tick: the triggers
 * skipped while paused and while orphaned (each span reported once, even if a fire is retried or
 * the table reloaded), a catch-up, and the triggers the catch-up rules skipped. Units: epoch ms.
 */
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import type { Entry } from './due-entry.js';
import type { Plan } from './plan.js';
import { RecentMap } from '../runtime/recent-map.js';

/** Most schedules whose reported spans are remembered (the last 5,000 reported at least, in two generations): the leader's memory stays bounded. */
const REPORTED_MEMORY = 10_000;

/** Reports plans, remembering which paused and orphaned spans were reported. */
export class PlanReports {
  /** Schedule → the resume whose skipped triggers were reported. */
  private readonly pauseReported = new RecentMap<string, number>(REPORTED_MEMORY / 2);
  /** Schedule → the orphaned-since instant whose skipped triggers were reported. */
  private readonly orphanReported = new RecentMap<string, number>(REPORTED_MEMORY / 2);

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
