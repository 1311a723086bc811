import type * as Prom from 'prom-client';
import { engineTime } from '../runtime/time.js';

/** How many removed schedules' removal instants are kept (the oldest forgotten first). */
const REMOVED_KEPT = 10_000;

/**
 * The per-schedule series of one process (`chronos_triggers_total`, `chronos_trigger_lag_seconds`),
 * kept only while their schedule exists: a removed schedule's series are removed from the metrics
 * (prom-client `remove`), so an app that creates and removes runtime schedules keeps a bounded
 * scrape. A removal is learnt from this process's `operator.acted` event (`forget`) or, for one
 * made elsewhere, from the fleet read's list of the registry (`keepOnly`).
 */
export class ScheduleSeries<O extends string> {
  /** schedule → outcome → counter child, and when this process first wrote a series of it (engine time, epoch ms). */
  private readonly known = new Map<
    string,
    { triggers?: Record<O, Prom.Counter.Internal>; lag?: Prom.Histogram.Internal<string>; since: number }
  >();

  /** schedule → when this process last removed its series (engine time, epoch ms): a task of a trigger before that is a straggler of the removed schedule. Bounded. */
  private readonly removedAt = new Map<string, number>();

  constructor(
    private readonly triggers: Prom.Counter<string>,
    private readonly lag: Prom.Histogram<string>,
    private readonly outcomes: readonly O[],
  ) {}

  private entry(schedule: string) {
    let e = this.known.get(schedule);
    if (!e) this.known.set(schedule, (e = { since: engineTime.now() }));
    return e;
  }

  /** The trigger counter of `schedule` for `outcome`; every outcome is created at 0 the first time (so `increase()` sees the first event). */
  trigger(schedule: string, outcome: O): Prom.Counter.Internal {
    const e = this.entry(schedule);
    if (!e.triggers) {
      const children = {} as Record<O, Prom.Counter.Internal>;
      for (const o of this.outcomes) (children[o] = this.triggers.labels(schedule, o)).inc(0);
      e.triggers = children;
    }
    return e.triggers[outcome];
  }

  /**
   * The trigger-lag histogram of `schedule` for a task of the trigger at `triggerAt` (epoch ms);
   * undefined for a task of a trigger enqueued before its schedule was removed here (one enqueued
   * ahead may still run): it would bring the removed series back.
   */
  lagOf(schedule: string, triggerAt: number): Prom.Histogram.Internal<string> | undefined {
    if (triggerAt < (this.removedAt.get(schedule) ?? -Infinity)) return undefined;
    const e = this.entry(schedule);
    return (e.lag ??= this.lag.labels(schedule));
  }

  /** Removes every series of `schedule` (it was removed). */
  forget(schedule: string): void {
    this.removedAt.delete(schedule);
    this.removedAt.set(schedule, engineTime.now());
    if (this.removedAt.size > REMOVED_KEPT) this.removedAt.delete(this.removedAt.keys().next().value!);
    const e = this.known.get(schedule);
    if (!e) return;
    this.known.delete(schedule);
    if (e.triggers) for (const o of this.outcomes) this.triggers.remove(schedule, o);
    if (e.lag) this.lag.remove(schedule);
  }

  /**
   * Removes the series of every schedule not in `registered`, the registry as a read started at
   * `readAt` (engine time, epoch ms) saw it; a schedule first seen here after that instant may have
   * been added after the read, and is kept.
   */
  keepOnly(registered: ReadonlySet<string>, readAt: number): void {
    for (const [schedule, e] of this.known) if (!registered.has(schedule) && e.since < readAt) this.forget(schedule);
  }
}
