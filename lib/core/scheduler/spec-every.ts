/**
 * Every-specs (rule 8 of the cron cases README): `@every <duration>` and `{ every }`, epoch-aligned.
 * Units: epoch milliseconds; periods and offsets are whole seconds.
 */
import { InvalidScheduleError } from '../runtime/errors.js';
import { MAX_INSTANT_MS, SECOND_MS, assertInstant, type ScheduleSpec } from './spec-base.js';

/**
 * `@every <n>`: a trigger is every instant T (ms) with (T - offsetMs) % everyMs == 0, i.e. unix
 * seconds t with (t - offset) % n == 0. Epoch-aligned like BullMQ's `every`, not "every n from
 * process start" (robfig/cron), which gives every replica different triggers (rule 8).
 * The time zone is ignored.
 */
export class EveryScheduleSpec implements ScheduleSpec {
  readonly kind = 'every' as const;
  readonly timeZone = 'UTC';
  readonly minPeriodMs: number;

  constructor(
    readonly expression: string,
    readonly everyMs: number,
    readonly offsetMs: number,
  ) {
    this.minPeriodMs = everyMs;
    Object.freeze(this);
  }

  /** Index k of the trigger k * everyMs + offsetMs that is the last one at or before `ms`. */
  private indexAtOrBefore(ms: number): number {
    return Math.floor((ms - this.offsetMs) / this.everyMs);
  }

  private at(k: number): number {
    return k * this.everyMs + this.offsetMs;
  }

  /** The first trigger after `afterMs`; null past the last instant a `Date` holds (as cron specs run out past their years). */
  nextAfter(afterMs: number): number | null {
    assertInstant(afterMs, 'afterMs');
    const next = this.at(this.indexAtOrBefore(afterMs) + 1);
    return next > MAX_INSTANT_MS ? null : next;
  }

  triggersBetween(afterMs: number, untilMs: number, cap: number): { triggers: number[]; skipped: number } {
    const first = this.indexAtOrBefore(afterMs) + 1;
    const last = this.indexAtOrBefore(untilMs);
    const count = Math.max(0, last - first + 1);
    const keep = Math.min(cap, count);
    const triggers: number[] = [];
    for (let k = last - keep + 1; k <= last; k++) triggers.push(this.at(k));
    return { triggers, skipped: count - keep };
  }
}

export function makeEverySpec(
  expression: string,
  everyMs: number,
  offsetMs: number | undefined,
  schedule: string | undefined,
): ScheduleSpec {
  if (typeof everyMs !== 'number' || !Number.isInteger(everyMs)) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be a whole number of seconds, got ${String(everyMs)} ms`);
  }
  if (everyMs < SECOND_MS) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be at least 1s, got ${everyMs} ms`);
  }
  if (everyMs % SECOND_MS !== 0) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be whole seconds, got ${everyMs} ms`);
  }
  if (everyMs > MAX_INSTANT_MS) {
    // past it, no trigger after 1970 is an instant a Date holds: such a schedule would never fire
    throw new InvalidScheduleError(schedule, expression, `the @every period is too large: at most ${MAX_INSTANT_MS} ms, got ${everyMs} ms`);
  }
  const offset = offsetMs ?? 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset >= everyMs || offset % SECOND_MS !== 0) {
    throw new InvalidScheduleError(
      schedule,
      expression,
      `offset (offsetMs): expected whole seconds in ms with 0 <= offset < ${everyMs} (the period, ms), got ${String(offsetMs)}`,
    );
  }
  return new EveryScheduleSpec(expression, everyMs, offset);
}
