/**
 * Schedule specs: parsing, validation and trigger computation for cron expressions, cron
 * descriptors and `@every <duration>`.
 *
 * Chronos does not implement calendar math itself: croner (`croner@11`) computes cron triggers.
 * This module adds what croner does not decide for us, following the conventions in the
 * project's cron cases README (`test/fixtures/cron-cases.json`; "rule N" below refers to the
 * numbered rules of that README, which come from Vixie cron / cronie `entry.c`, `cron.c`,
 * `cron(8)`, `crontab(5)`):
 *
 * - strict 5-field syntax with range/step/name validation and clear errors (rules 2, 9, 10);
 * - the Vixie `DOM_STAR`/`DOW_STAR` day-field rule (rule 3);
 * - the Vixie `MIN_STAR|HR_STAR` fixed-time/interval job rule for DST (rules 4-6);
 * - descriptors mapped to explicit 5-field expressions (rule 7);
 * - epoch-aligned `@every` (rule 8).
 *
 * Files: `spec.ts` (the public functions), `spec-every.ts` (every-specs), `spec-cron.ts` (cron
 * specs over croner), `cron-fields.ts` (field parsing), `time-zones.ts` (zone checks) and
 * `spec-base.ts` (the {@link ScheduleSpec} contract and units they share).
 *
 * Everything here is pure: the triggers of a spec are a function of (spec, time zone, after)
 * only (rule 1), so any instance or a newly elected leader computes the same trigger instants,
 * and the dedupe key `<schedule>:<trigger-unix>` matches across the fleet.
 *
 * Units: every instant is epoch milliseconds (UTC). Trigger instants are whole seconds (cron
 * triggers are whole minutes).
 * @publicApi
 */
import { InvalidScheduleError } from '../runtime/errors.js';
import { CronScheduleSpec, cronSpec, DESCRIPTORS } from './spec-cron.js';
import { BoundedSpec } from './spec-bounded.js';
import { EveryScheduleSpec, makeEverySpec } from './spec-every.js';
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  SECOND_MS,
  TRIGGERS_BETWEEN_COUNT_LIMIT,
  assertInstant,
  latest,
  type ScheduleSpec,
} from './spec-base.js';
import { validateTimeZone } from './time-zones.js';

export { TRIGGERS_BETWEEN_COUNT_LIMIT, type ScheduleSpec };

/** Options of {@link parseSpec} (and of the internal `everySpec`). */
export interface ParseSpecOptions {
  /** IANA time zone of a cron spec; default 'UTC'. Validated for every-specs too, but ignored. */
  timeZone?: string;
  /** Schedule name, used in error messages. */
  schedule?: string;
  /** Only for every-specs: offset in ms (whole seconds, 0 <= offset < period); default 0. */
  offsetMs?: number;
  /**
   * The expression of a stored definition: a cron step an earlier version accepted (`*\/60`, the
   * field's span) still parses, so the schedule keeps firing; a new definition's is refused. @internal
   */
  stored?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------

/**
 * Parses a cron expression (5 fields), a descriptor (`@daily`, ...) or `@every <duration>`.
 * Validates the time zone (`options.timeZone`, default 'UTC') with Intl.
 * @throws InvalidScheduleError naming the schedule, the value and what is wrong (rule 9).
 */
export function parseSpec(expression: string, options: ParseSpecOptions = {}): ScheduleSpec {
  const schedule = options.schedule;
  if (typeof expression !== 'string') {
    throw new InvalidScheduleError(schedule, String(expression), `the expression must be a string, got ${typeof expression}`);
  }
  const text = expression.trim();
  if (text === '') {
    throw new InvalidScheduleError(
      schedule,
      expression,
      'empty expression: expected 5 cron fields, a descriptor such as @daily, or @every <duration>',
    );
  }
  const timeZone = validateTimeZone(options.timeZone, schedule, expression);

  if (text.startsWith('@')) {
    const every = /^@every(?:\s+(\S.*))?$/i.exec(text);
    if (every) {
      if (every[1] === undefined) {
        throw new InvalidScheduleError(schedule, expression, '@every needs a duration, e.g. "@every 90s" or "@every 1h30m"');
      }
      let everyMs: number;
      try {
        everyMs = parseDurationMs(every[1].trim(), schedule);
      } catch (err) {
        if (!(err instanceof InvalidScheduleError)) throw err;
        const problem = `@every duration ${JSON.stringify(err.value)}: ${err.problem}`;
        throw new InvalidScheduleError(schedule, expression, problem, { cause: err });
      }
      return makeEverySpec(expression, everyMs, options.offsetMs, schedule);
    }
    const name = text.slice(1).toLowerCase();
    const mapped = Object.hasOwn(DESCRIPTORS, name) ? DESCRIPTORS[name] : undefined;
    if (mapped === undefined) {
      const hint = name === 'reboot' ? '@reboot is not supported by a distributed scheduler' : `unknown descriptor "${text}"`;
      const known = Object.keys(DESCRIPTORS)
        .map((d) => '@' + d)
        .join(', ');
      throw new InvalidScheduleError(schedule, expression, `${hint} (known: ${known}, @every <duration>)`);
    }
    rejectCronOffset(options.offsetMs, schedule, expression);
    return cronSpec(expression, mapped, timeZone, schedule, options.stored);
  }

  rejectCronOffset(options.offsetMs, schedule, expression);
  return cronSpec(expression, text, timeZone, schedule, options.stored);
}

/**
 * The canonical spelling of an expression {@link parseSpec} accepted, so that two texts of one spec
 * store the same definition (as a zone's spelling is made canonical, time-zones.ts): no leading or
 * trailing white space, one space between fields; a cron expression's names and letters upper-case
 * (`mon-fri` is `MON-FRI`, `5l` is `5L`: the parser reads them in any case), a descriptor and the
 * `@every` keyword lower-case (`@DAILY` is `@daily`; the duration is kept as written, its units are
 * lower-case already). An expression already so written is returned as it is, so a definition
 * stored before keeps its fingerprint.
 * @internal
 */
export function canonicalExpression(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  const first = fields[0];
  if (first.startsWith('@')) fields[0] = first.toLowerCase();
  const text = fields.join(' ');
  return first.startsWith('@') ? text : text.toUpperCase();
}

/**
 * Builds an epoch-aligned every-spec (rule 8) from a period in ms (number) or a duration string
 * ('10s', '1h30m'; see {@link parseDurationMs}). The period must be whole seconds and at least
 * 1 s ('500ms', '1500ms' are rejected, '2000ms' is 2 s).
 * @throws InvalidScheduleError
 */
export function everySpec(every: number | string, options: ParseSpecOptions = {}): ScheduleSpec {
  const schedule = options.schedule;
  validateTimeZone(options.timeZone, schedule, String(every));
  if (typeof every === 'string') {
    const ms = parseDurationMs(every, schedule);
    return makeEverySpec(`@every ${every.trim()}`, ms, options.offsetMs, schedule);
  }
  if (typeof every !== 'number') {
    throw new InvalidScheduleError(schedule, String(every), `every must be a number of ms or a duration string, got ${typeof every}`);
  }
  const label = Number.isSafeInteger(every) && every > 0 && every % SECOND_MS === 0 ? formatDuration(every) : `${every}ms`;
  return makeEverySpec(`@every ${label}`, every, options.offsetMs, schedule);
}

/**
 * Parses a duration into ms: one or more `<integer><unit>` parts with units `d`, `h`, `m`, `s`,
 * `ms` (lower case, largest unit first, each at most once), e.g. '90s', '1h30m', '2m', '1d',
 * '1500ms'; '0' alone is 0. No fractions, signs, spaces or bare numbers.
 * @param schedule schedule name used in the error message
 * @throws InvalidScheduleError on anything else
 */
export function parseDurationMs(text: string, schedule?: string): number {
  if (typeof text !== 'string') {
    throw new InvalidScheduleError(schedule, String(text), `a duration must be a string, got ${typeof text}`);
  }
  const t = text.trim();
  if (t === '') throw new InvalidScheduleError(schedule, text, 'empty duration: expected e.g. "90s", "1h30m", "2m", "1d"');
  if (t === '0') return 0;
  const m = DURATION_RE.exec(t);
  if (!m || m.slice(1).every((g) => g === undefined)) {
    const why = /\d[.,]\d/.test(t) ? 'fractional amounts are not supported' : /^\d+$/.test(t) ? 'a unit is required' : 'not a duration';
    throw new InvalidScheduleError(
      schedule,
      text,
      `${why}: expected integer amounts of d, h, m, s, ms, largest unit first, e.g. "90s", "1h30m", "2m", "1d"`,
    );
  }
  const [, d, h, min, s, ms] = m;
  const total = num(d) * DAY_MS + num(h) * HOUR_MS + num(min) * MINUTE_MS + num(s) * SECOND_MS + num(ms);
  if (!Number.isSafeInteger(total)) {
    throw new InvalidScheduleError(schedule, text, 'the duration is too large');
  }
  return total;
}

/** The next n triggers strictly after afterMs (epoch ms), ascending; fewer if the spec runs out. */
export function nextTriggers(spec: ScheduleSpec, afterMs: number, n: number): number[] {
  assertCount(n, 'n');
  const out: number[] = [];
  let cursor = afterMs;
  while (out.length < n) {
    const next = spec.nextAfter(cursor);
    if (next === null) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/**
 * Triggers in the window (afterMs, untilMs] (epoch ms): the LATEST `cap` of them ascending, and
 * `skipped`, the number of older triggers in the window that were left out.
 *
 * Every-specs use arithmetic, so any window is O(cap) and `skipped` is exact. Cron specs iterate;
 * past `TRIGGERS_BETWEEN_COUNT_LIMIT` (10,000) triggers the count stops, the latest triggers are
 * found from the end of the window, and `skipped` is a lower bound.
 */
export function triggersBetween(
  spec: ScheduleSpec,
  afterMs: number,
  untilMs: number,
  cap: number,
): {
  /** The latest `cap` trigger instants in the window, ascending, epoch ms. */
  triggers: number[];
  /** Older triggers in the window left out (exact for every-specs, a lower bound for cron past the count limit). */
  skipped: number;
} {
  assertInstant(afterMs, 'afterMs');
  assertInstant(untilMs, 'untilMs');
  assertCount(cap, 'cap');
  if (untilMs <= afterMs) return { triggers: [], skipped: 0 };
  if (spec instanceof BoundedSpec) return triggersBetween(spec.inner, ...spec.clip(afterMs, untilMs), cap);
  if (spec instanceof EveryScheduleSpec) return spec.triggersBetween(afterMs, untilMs, cap);
  if (spec instanceof CronScheduleSpec) return spec.triggersBetween(afterMs, untilMs, cap);
  return genericTriggersBetween(spec, afterMs, untilMs, cap);
}

function genericTriggersBetween(
  spec: ScheduleSpec,
  afterMs: number,
  untilMs: number,
  cap: number,
): { triggers: number[]; skipped: number } {
  // A spec from elsewhere: count up to the limit; past it, `skipped` is a lower bound and the
  // triggers are the latest counted ones, not the latest of the window.
  const seen: number[] = [];
  let cursor = afterMs;
  while (seen.length < TRIGGERS_BETWEEN_COUNT_LIMIT) {
    const next = spec.nextAfter(cursor);
    if (next === null || next > untilMs) break;
    seen.push(next);
    cursor = next;
  }
  return latest(seen, cap, 0);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** d, h, m, s, ms in that order, each optional; integers only. */
const DURATION_RE = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;

function num(group: string | undefined): number {
  return group === undefined ? 0 : Number(group);
}

/** '1h30m' style text of a whole-millisecond duration. */
function formatDuration(ms: number): string {
  let rest = ms;
  let out = '';
  for (const [unit, size] of [
    ['d', DAY_MS],
    ['h', HOUR_MS],
    ['m', MINUTE_MS],
    ['s', SECOND_MS],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out || '0s';
}

function rejectCronOffset(offsetMs: number | undefined, schedule: string | undefined, expression: string): void {
  if (offsetMs !== undefined && offsetMs !== 0) {
    throw new InvalidScheduleError(schedule, expression, `offsetMs (${String(offsetMs)}) applies only to @every schedules`);
  }
}

function assertCount(n: number, name: string): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(n)}`);
  }
}
