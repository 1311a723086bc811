/**
 * What every schedule spec shares: the {@link ScheduleSpec} contract, time units and the checks of
 * instants, used by the every-specs, the cron specs and the public functions of `spec.ts`.
 * Units: epoch milliseconds (UTC).
 */

/** Parsed, validated schedule spec. Trigger instants are a pure function of (spec, tz, after). */
export interface ScheduleSpec {
  /** `cron` for cron expressions and descriptors (`@daily`), `every` for epoch-aligned intervals (`@every 90s`, `{ every }`). */
  readonly kind: 'cron' | 'every';
  /** The source text as given, e.g. '0 3 * * *' or '@every 90s'. */
  readonly expression: string;
  /** IANA zone used for cron; 'UTC' for every-specs (ignored). */
  readonly timeZone: string;
  /** For kind 'every': the period in ms (whole seconds). Undefined for cron. */
  readonly everyMs?: number;
  /** For kind 'every': offset in ms (whole seconds, 0 <= offset < everyMs). */
  readonly offsetMs?: number;
  /**
   * Smallest gap between two consecutive triggers, ms (every: everyMs; cron: a lower bound, e.g.
   * 60000 for per-minute) — used to size dedup TTLs. A lower bound: the real gap is never smaller.
   */
  readonly minPeriodMs: number;
  /** First trigger strictly after `afterMs` (epoch ms), or null if none ever. */
  nextAfter(afterMs: number): number | null;
}

/**
 * `triggersBetween` on a cron spec counts triggers one by one (croner takes roughly 10-80 µs per
 * trigger). Past this many triggers in the window it stops counting, finds the latest triggers
 * by searching back from the end of the window, and reports `skipped` as a lower bound.
 */
export const TRIGGERS_BETWEEN_COUNT_LIMIT = 10_000;

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** The last `cap` of ascending `all`, and how many were left out (plus `alsoSkipped`). */
export function latest(all: number[], cap: number, alsoSkipped: number): { triggers: number[]; skipped: number } {
  const triggers = all.slice(Math.max(0, all.length - cap));
  return { triggers, skipped: alsoSkipped + all.length - triggers.length };
}

/** The last instant a JavaScript `Date` holds, epoch ms (ECMA-262 "Time Values and Time Range": ±8.64e15). */
export const MAX_INSTANT_MS = 8.64e15;

/** @throws RangeError unless `ms` is a finite epoch instant (ms) a `Date` holds ({@link MAX_INSTANT_MS}). */
export function assertInstant(ms: number, name: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > MAX_INSTANT_MS) {
    throw new RangeError(`${name} must be a finite epoch time in ms, got ${String(ms)}`);
  }
}
