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
 * Everything here is pure: the triggers of a spec are a function of (spec, time zone, after)
 * only (rule 1), so any instance or a newly elected leader computes the same trigger instants,
 * and the dedupe key `<schedule>:<trigger-unix>` matches across the fleet.
 *
 * Units: every instant is epoch milliseconds (UTC). Trigger instants are whole seconds (cron
 * triggers are whole minutes).
 * @publicApi
 */
import { Cron, type CronOptions } from 'croner';
import { InvalidScheduleError } from '../errors.js';

/** Parsed, validated schedule spec. Trigger instants are a pure function of (spec, tz, after). */
export interface ScheduleSpec {
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

/** Options of {@link parseSpec} and {@link everySpec}. */
export interface ParseSpecOptions {
  /** IANA time zone of a cron spec; default 'UTC'. Validated for every-specs too, but ignored. */
  timeZone?: string;
  /** Schedule name, used in error messages. */
  schedule?: string;
  /** Only for every-specs: offset in ms (whole seconds, 0 <= offset < period); default 0. */
  offsetMs?: number;
}

/**
 * `triggersBetween` on a cron spec counts triggers one by one (croner takes roughly 10-80 µs per
 * trigger). Past this many triggers in the window it stops counting, finds the latest triggers
 * by searching back from the end of the window, and reports `skipped` as a lower bound.
 */
export const TRIGGERS_BETWEEN_COUNT_LIMIT = 10_000;

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * Largest DST/offset jump assumed by `minPeriodMs` of fixed-time jobs in zones that have
 * transitions (the largest DST shift in use is 2 h, Antarctica/Troll), with a margin.
 */
const MAX_TRANSITION_SHIFT_MS = 3 * HOUR_MS;

/** croner computes years 1-9999; cron triggers are searched within [CRON_MIN_MS, CRON_MAX_MS]. */
const CRON_MIN_MS = Date.parse('0001-01-01T00:00:00Z');
const CRON_MAX_MS = Date.parse('9999-12-31T00:00:00Z');

/** Reference instant for checking that a cron spec fires at all (croner searches 400 years). */
const NEVER_CHECK_FROM_MS = Date.UTC(2000, 0, 1);

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
    throw new InvalidScheduleError(schedule, expression, 'empty expression: expected 5 cron fields, a descriptor such as @daily, or @every <duration>');
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
        throw new InvalidScheduleError(schedule, expression, `@every duration ${JSON.stringify(err.value)}: ${err.problem}`, { cause: err });
      }
      return makeEverySpec(expression, everyMs, options.offsetMs, schedule);
    }
    const name = text.slice(1).toLowerCase();
    const mapped = Object.hasOwn(DESCRIPTORS, name) ? DESCRIPTORS[name] : undefined;
    if (mapped === undefined) {
      const hint = name === 'reboot' ? '@reboot is not supported by a distributed scheduler' : `unknown descriptor "${text}"`;
      throw new InvalidScheduleError(schedule, expression, `${hint} (known: ${Object.keys(DESCRIPTORS).map((d) => '@' + d).join(', ')}, @every <duration>)`);
    }
    rejectCronOffset(options.offsetMs, schedule, expression);
    return new CronScheduleSpec(expression, mapped, timeZone, schedule);
  }

  rejectCronOffset(options.offsetMs, schedule, expression);
  return new CronScheduleSpec(expression, text, timeZone, schedule);
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
    const why = /\d[.,]\d/.test(t)
      ? 'fractional amounts are not supported'
      : /^\d+$/.test(t)
        ? 'a unit is required'
        : 'not a duration';
    throw new InvalidScheduleError(
      schedule,
      text,
      `${why}: expected integer amounts of d, h, m, s, ms, largest unit first, e.g. "90s", "1h30m", "2m", "1d", "1500ms"`,
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
 * past {@link TRIGGERS_BETWEEN_COUNT_LIMIT} triggers the count stops, the latest triggers are
 * found from the end of the window, and `skipped` is a lower bound.
 */
export function triggersBetween(
  spec: ScheduleSpec,
  afterMs: number,
  untilMs: number,
  cap: number,
): { triggers: number[]; skipped: number } {
  assertInstant(afterMs, 'afterMs');
  assertInstant(untilMs, 'untilMs');
  assertCount(cap, 'cap');
  if (untilMs <= afterMs) return { triggers: [], skipped: 0 };
  if (spec instanceof EveryScheduleSpec) return spec.triggersBetween(afterMs, untilMs, cap);
  if (spec instanceof CronScheduleSpec) return spec.triggersBetween(afterMs, untilMs, cap);
  return genericTriggersBetween(spec, afterMs, untilMs, cap);
}

// ---------------------------------------------------------------------------------------------
// Every-specs (rule 8)
// ---------------------------------------------------------------------------------------------

/**
 * `@every <n>`: a trigger is every instant T (ms) with (T - offsetMs) % everyMs == 0, i.e. unix
 * seconds t with (t - offset) % n == 0. Epoch-aligned like BullMQ's `every`, not "every n from
 * process start" (robfig/cron), which gives every replica different triggers (rule 8).
 * The time zone is ignored.
 */
class EveryScheduleSpec implements ScheduleSpec {
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

  nextAfter(afterMs: number): number | null {
    assertInstant(afterMs, 'afterMs');
    return this.at(this.indexAtOrBefore(afterMs) + 1);
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

function makeEverySpec(expression: string, everyMs: number, offsetMs: number | undefined, schedule: string | undefined): ScheduleSpec {
  if (typeof everyMs !== 'number' || !Number.isInteger(everyMs)) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be a whole number of seconds, got ${String(everyMs)} ms`);
  }
  if (everyMs < SECOND_MS) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be at least 1s, got ${everyMs} ms`);
  }
  if (everyMs % SECOND_MS !== 0) {
    throw new InvalidScheduleError(schedule, expression, `the @every period must be whole seconds, got ${everyMs} ms`);
  }
  if (!Number.isSafeInteger(everyMs)) {
    throw new InvalidScheduleError(schedule, expression, 'the @every period is too large');
  }
  const offset = offsetMs ?? 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset >= everyMs || offset % SECOND_MS !== 0) {
    throw new InvalidScheduleError(
      schedule,
      expression,
      `offsetMs must be whole seconds with 0 <= offsetMs < ${everyMs} (the period), got ${String(offsetMs)}`,
    );
  }
  return new EveryScheduleSpec(expression, everyMs, offset);
}

// ---------------------------------------------------------------------------------------------
// Cron specs
// ---------------------------------------------------------------------------------------------

/**
 * Descriptors as 5-field expressions, as cronie `entry.c` defines them (rule 7). `@hourly` has a
 * `*` hour, so it is an interval job (cronie sets HR_STAR). `@reboot` is rejected.
 */
const DESCRIPTORS: Readonly<Record<string, string>> = Object.freeze({
  yearly: '0 0 1 1 *',
  annually: '0 0 1 1 *',
  monthly: '0 0 1 * *',
  weekly: '0 0 * * 0',
  daily: '0 0 * * *',
  midnight: '0 0 * * *',
  hourly: '0 * * * *',
});

/** A cron spec evaluated by croner in its IANA zone. */
class CronScheduleSpec implements ScheduleSpec {
  readonly kind = 'cron' as const;
  readonly minPeriodMs: number;
  readonly #cron: Cron;

  constructor(
    readonly expression: string,
    fiveFields: string,
    readonly timeZone: string,
    schedule: string | undefined,
  ) {
    const compiled = compileCron(expression, fiveFields, timeZone, schedule);
    this.#cron = compiled.cron;
    this.minPeriodMs = compiled.minPeriodMs;
    Object.freeze(this);
  }

  /**
   * croner's `nextRun(date)` returns the first run strictly after the exact instant of `date`
   * (milliseconds included), walking real time, so a non-aligned `afterMs` works.
   */
  nextAfter(afterMs: number): number | null {
    assertInstant(afterMs, 'afterMs');
    if (afterMs >= CRON_MAX_MS) return null;
    const next = this.#cron.nextRun(new Date(Math.max(afterMs, CRON_MIN_MS - 1)));
    return next === null ? null : next.getTime();
  }

  triggersBetween(afterMs: number, untilMs: number, cap: number): { triggers: number[]; skipped: number } {
    const seen: number[] = []; // every counted trigger, ascending (at most the count limit)
    let cursor = afterMs;
    for (;;) {
      const next = this.nextAfter(cursor);
      if (next === null || next > untilMs) return latest(seen, cap, 0);
      seen.push(next);
      cursor = next;
      if (seen.length >= TRIGGERS_BETWEEN_COUNT_LIMIT) break;
    }
    const counted = seen.length;
    if (cap === 0) return { triggers: [], skipped: counted };
    // Too many to count: find the last `cap` triggers from the end of the window. croner's
    // backward search only picks the starting point; the triggers themselves come from the
    // forward search (nextAfter), so they are exactly the ones nextAfter yields.
    const back = this.#cron.previousRuns(cap, new Date(untilMs + 1));
    const earliest = back.length > 0 ? back[back.length - 1]!.getTime() : untilMs;
    const tailStart = Math.max(cursor, earliest - 1);
    const tail: number[] = [];
    let c = tailStart;
    for (;;) {
      const next = this.nextAfter(c);
      if (next === null || next > untilMs) break;
      tail.push(next);
      c = next;
    }
    // If the tail joins the counted triggers, everything was counted and `skipped` is exact;
    // otherwise the triggers between the two are not counted and `skipped` is a lower bound.
    return tailStart === cursor ? latest(seen.concat(tail), cap, 0) : latest(tail, cap, counted);
  }
}

/** The last `cap` of ascending `all`, and how many were left out (plus `alsoSkipped`). */
function latest(all: number[], cap: number, alsoSkipped: number): { triggers: number[]; skipped: number } {
  const triggers = all.slice(Math.max(0, all.length - cap));
  return { triggers, skipped: alsoSkipped + all.length - triggers.length };
}

function genericTriggersBetween(spec: ScheduleSpec, afterMs: number, untilMs: number, cap: number): { triggers: number[]; skipped: number } {
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

/** The croner instance and derived facts of a validated 5-field expression. */
function compileCron(expression: string, fiveFields: string, timeZone: string, schedule: string | undefined): { cron: Cron; minPeriodMs: number } {
  const fail = (problem: string, cause?: unknown): never => {
    throw new InvalidScheduleError(schedule, expression, problem, cause === undefined ? undefined : { cause });
  };

  // Rule 2: exactly 5 fields; extra whitespace is fine.
  const texts = fiveFields.split(/\s+/).filter((f) => f !== '');
  if (texts.length !== 5) {
    fail(
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${texts.length} field${texts.length === 1 ? '' : 's'}` +
        (texts.length === 6 || texts.length === 7 ? ' (seconds and year fields are not supported)' : ''),
    );
  }
  const fields = FIELD_DEFS.map((def, i) => {
    try {
      return parseField(def, texts[i]!);
    } catch (err) {
      if (err instanceof FieldError) {
        // Items are quoted in the problem; drop the quote when the item is the whole field.
        const quoted = `${JSON.stringify(texts[i])}: `;
        const problem = err.message.startsWith(quoted) ? err.message.slice(quoted.length) : err.message;
        return fail(`${def.name} field ${JSON.stringify(texts[i])}: ${problem}`);
      }
      throw err;
    }
  });
  const [minute, hour, dom, month, dow] = fields as [ParsedField, ParsedField, ParsedField, ParsedField, ParsedField];

  // Rule 3 (Vixie DOM_STAR/DOW_STAR, cronie cron.c find_jobs): AND the day fields when either
  // field text starts with '*' (so '*/3' counts as a star), otherwise OR them.
  const domAndDow = dom.star || dow.star;

  // Rule 9: a date combination that can never occur. Only when the day-of-month alone decides
  // the day (days ANDed, or day-of-week '*'): some selected day must exist in some selected
  // month (February has 29 days in a leap year). With OR, the day-of-week still matches.
  if (domAndDow && !dom.lastDay) {
    const possible = month.values.some((mo) => dom.values.some((d) => d <= LEAP_MONTH_DAYS[mo - 1]!));
    if (!possible) {
      const months = month.values.map((mo) => MONTH_LABELS[mo - 1]).join(', ');
      fail(`day-of-month ${JSON.stringify(dom.text)} never occurs in ${months} (month field ${JSON.stringify(month.text)}): the schedule would never fire`);
    }
  }

  const pattern = [minute.croner, hour.croner, dom.croner, month.croner, dow.croner].join(' ');
  const fixedUtc = resolvedZone(timeZone) === 'UTC';
  const options: CronOptions = {
    // Rule 2: classic 5 fields, no seconds or years.
    mode: '5-part',
    // Rule 3, see above.
    domAndDow,
    // Rules 4-6: croner's "no-wildcard" rule makes a job fixed-time when its minute and hour
    // fields have no '*' and no '/'. Minute and hour fields that do not start with '*' are given
    // to croner as explicit value lists (steps expanded), so a job is fixed-time exactly when
    // neither field starts with '*', as in Vixie cron (MIN_STAR|HR_STAR).
    fixedTimeRule: 'no-wildcard',
    // A UTC zone is evaluated with croner's fixed-offset path (same result, several times faster).
    ...(fixedUtc ? { utcOffset: 0 } : { timezone: timeZone }),
  };
  let cron: Cron;
  try {
    cron = new Cron(pattern, options);
  } catch (err) {
    return fail(`rejected by croner${cronerFieldHint(err)}: ${err instanceof Error ? err.message : String(err)}`, err);
  }

  // Combinations the day-of-month check cannot see ('*/20' AND '5#2'): croner searches 400
  // years, a whole Gregorian cycle, and finds nothing.
  let first: Date | null;
  try {
    first = cron.nextRun(new Date(NEVER_CHECK_FROM_MS));
  } catch (err) {
    return fail(`rejected by croner: ${err instanceof Error ? err.message : String(err)}`, err);
  }
  if (first === null) {
    fail(
      `no date matches day-of-month ${JSON.stringify(dom.text)}, month ${JSON.stringify(month.text)} and day-of-week ${JSON.stringify(dow.text)}: the schedule would never fire`,
    );
  }

  const interval = minute.star || hour.star;
  return { cron, minPeriodMs: cronMinPeriodMs(minute.values, hour.values, interval, fixedUtc || isFixedOffsetZone(timeZone)) };
}

/**
 * Lower bound of the gap between two consecutive cron triggers, ms.
 *
 * Wall-clock gap: the smallest distance between two matching times of day (minute x hour,
 * cyclic over the day); restricting days only makes gaps larger. In a fixed-offset zone that is
 * the real gap. With DST: a fixed-time job collapses gap times into the jump (rule 5), which
 * shortens a gap by at most the shift, so the bound is the wall gap minus
 * {@link MAX_TRANSITION_SHIFT_MS}; an interval job runs in both passes of a repeated hour
 * (rule 6), where two triggers can be a few minutes apart (e.g. a 30-minute shift), so its bound
 * is one minute. Never below one minute: cron triggers are distinct whole minutes.
 */
function cronMinPeriodMs(minutes: readonly number[], hours: readonly number[], interval: boolean, fixedOffset: boolean): number {
  const times = hours.flatMap((h) => minutes.map((m) => h * 60 + m)).sort((a, b) => a - b);
  let gapMin = 24 * 60;
  for (let i = 1; i < times.length; i++) gapMin = Math.min(gapMin, times[i]! - times[i - 1]!);
  if (times.length > 1) gapMin = Math.min(gapMin, times[0]! + 24 * 60 - times[times.length - 1]!);
  const wall = gapMin * MINUTE_MS;
  if (fixedOffset) return wall;
  if (interval) return MINUTE_MS;
  return Math.max(MINUTE_MS, wall - MAX_TRANSITION_SHIFT_MS);
}

/** Names the field in a croner error message where it says which one ("minute", "entry 1"). */
function cronerFieldHint(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const entry = /configuration entry (\d)/.exec(msg);
  if (entry) {
    // croner numbers the fields with seconds first.
    const name = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week', 'year'][Number(entry[1])];
    if (name) return ` in the ${name} field`;
  }
  const named = /\b(minute|hour|day|month|dayOfWeek|nearestWeekdays)\b/.exec(msg);
  if (named) {
    const map: Record<string, string> = { minute: 'minute', hour: 'hour', day: 'day-of-month', nearestWeekdays: 'day-of-month', month: 'month', dayOfWeek: 'day-of-week' };
    return ` in the ${map[named[1]!]} field`;
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// Field parsing (rules 2, 9, 10)
// ---------------------------------------------------------------------------------------------

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DOW_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
const MONTH_LABELS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** Days per month in a leap year, so that `29 2` is possible (rule 9). */
const LEAP_MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface FieldDef {
  readonly name: 'minute' | 'hour' | 'day-of-month' | 'month' | 'day-of-week';
  readonly min: number;
  /** Largest value; 7 for day-of-week (7 and 0 are Sunday, rule 2). */
  readonly max: number;
  /** 3-letter names, case-insensitive (rule 2); value = index + nameBase. */
  readonly names?: readonly string[];
  readonly nameBase?: number;
}

const FIELD_DEFS: readonly FieldDef[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: DOW_NAMES, nameBase: 0 },
];

interface ParsedField {
  /** The field text as written. */
  readonly text: string;
  /** The text starts with '*': Vixie's MIN_STAR/HR_STAR/DOM_STAR/DOW_STAR (rules 3, 4). */
  readonly star: boolean;
  /** Selected plain values, sorted, unique (day-of-week 7 stored as 0). */
  readonly values: number[];
  /** Day-of-month `L` (last day, rule 10 extension). */
  readonly lastDay: boolean;
  /** The field as given to croner. */
  readonly croner: string;
}

class FieldError extends Error {}

/**
 * Parses one field: a comma list of `*`, `n`, `a-b`, each optionally `/step`, plus `N/step` =
 * `N-max/step` (rule 10). Day-of-week ranges ending in 0/SUN end at 7 (cronie get_range, rule 2).
 * Extensions (rule 10, cron-parser/Quartz): `L` in day-of-month, `nL` and `n#k` in day-of-week.
 */
function parseField(def: FieldDef, text: string): ParsedField {
  const values = new Set<number>();
  const extensions: string[] = [];
  let lastDay = false;
  const starItems: string[] = [];

  for (const item of text.split(',')) {
    if (item === '') throw new FieldError('empty list item (stray comma)');
    if (item.includes('?')) throw new FieldError(`"?" is not supported, use "*"`);

    if (def.name === 'day-of-month' && /^l$/i.test(item)) {
      lastDay = true;
      continue;
    }
    if (def.name === 'day-of-week') {
      const last = /^([^-/#*,]+)l$/i.exec(item);
      if (last && !/^[a-z]{3}$/i.test(item)) {
        const day = parseValue(def, last[1]!) % 7;
        extensions.push(`${day}L`);
        continue;
      }
      const nth = /^([^-/#*,]+)#(.*)$/.exec(item);
      if (nth) {
        const day = parseValue(def, nth[1]!) % 7;
        const k = /^\d+$/.test(nth[2]!) ? Number(nth[2]) : NaN;
        if (!(k >= 1 && k <= 5)) throw new FieldError(`"${item}": the occurrence after "#" must be 1-5`);
        extensions.push(`${day}#${k}`);
        continue;
      }
    }
    if (/[lw#+]/i.test(item) && !(def.names && /[a-z]{3}/i.test(item))) {
      throw new FieldError(`"${item}" uses an unsupported modifier (supported: L in day-of-month, nL and n#k in day-of-week)`);
    }

    const slash = item.split('/');
    if (slash.length > 2) throw new FieldError(`"${item}" has more than one "/"`);
    const [base, stepText] = slash as [string, string | undefined];
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) throw new FieldError(`"${item}": the step must be a positive integer, got ${JSON.stringify(stepText)}`);
      step = Number(stepText);
      if (step === 0) throw new FieldError(`"${item}": zero step (a step must be at least 1)`);
      const span = def.name === 'day-of-week' ? 7 : def.max - def.min + 1;
      if (step > span) throw new FieldError(`"${item}": step ${step} is larger than the field's span of ${span}`);
    }

    let lo: number;
    let hi: number;
    if (base === '*') {
      lo = def.min;
      hi = def.max;
      starItems.push(item);
    } else if (base.includes('-')) {
      const parts = base.split('-');
      if (parts.length !== 2 || parts[0] === '' || parts[1] === '') throw new FieldError(`"${item}" is not a valid range (expected a-b)`);
      lo = parseValue(def, parts[0]!);
      hi = parseValue(def, parts[1]!);
      // cronie get_range: a day-of-week range that ends in 0/SUN means ...-7 (SAT-SUN = 6-7).
      if (def.name === 'day-of-week' && hi === 0 && lo > 0) hi = 7;
      if (lo > hi) {
        throw new FieldError(
          `reversed range ${JSON.stringify(base)}: the first value must not be larger than the second (wrap-around ranges are not supported; write e.g. 22-23,0-2)`,
        );
      }
    } else {
      lo = parseValue(def, base);
      // Rule 10 (cron-parser, Quartz): "N/step" means "N-max/step".
      hi = stepText !== undefined ? def.max : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(def.name === 'day-of-week' ? v % 7 : v);
  }

  const sorted = [...values].sort((a, b) => a - b);
  const star = text.startsWith('*');
  let croner: string;
  if (text === '*') {
    croner = '*';
  } else if ((def.name === 'minute' || def.name === 'hour') && star) {
    // Keep the '*' items so croner classifies the job as an interval job (rule 4).
    croner = [...starItems, ...sorted].join(',');
  } else {
    // Explicit values: steps expanded, names and 7 resolved (rule 4, see compileCron).
    croner = [...sorted.map(String), ...(lastDay ? ['L'] : []), ...extensions].join(',');
  }
  return { text, star, values: sorted, lastDay, croner };
}

/** A number (leading zeros fine) or, in month/day-of-week, a 3-letter name; range-checked. */
function parseValue(def: FieldDef, token: string): number {
  let v: number;
  if (/^\d+$/.test(token)) {
    v = Number(token);
  } else if (def.names && /^[a-z]{3}$/i.test(token)) {
    const i = def.names.indexOf(token.toUpperCase());
    if (i < 0) throw new FieldError(`unknown name ${JSON.stringify(token)} (expected ${def.names.join(', ')})`);
    return i + (def.nameBase ?? 0);
  } else {
    throw new FieldError(
      `${JSON.stringify(token)} is not a ${def.names ? 'number or 3-letter name' : 'number'}`,
    );
  }
  if (v < def.min || v > def.max) {
    throw new FieldError(`${token} is out of range ${def.min}-${def.max}${def.name === 'day-of-week' ? ' (0 and 7 are Sunday)' : ''}`);
  }
  return v;
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
  for (const [unit, size] of [['d', DAY_MS], ['h', HOUR_MS], ['m', MINUTE_MS], ['s', SECOND_MS], ['ms', 1]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out || '0s';
}

/** Rule 9: an unknown IANA zone is rejected (checked with Intl, as croner uses Intl). */
function validateTimeZone(timeZone: string | undefined, schedule: string | undefined, expression: string): string {
  if (timeZone === undefined) return 'UTC';
  if (typeof timeZone !== 'string' || !/^[A-Za-z]/.test(timeZone) || resolvedZone(timeZone) === null) {
    throw new InvalidScheduleError(
      schedule,
      String(timeZone),
      `unknown IANA time zone for ${JSON.stringify(expression)} (expected a name such as "Europe/Budapest" or "UTC")`,
    );
  }
  return timeZone;
}

const zoneCache = new Map<string, string | null>();

/** Intl's canonical name of a zone ('Etc/UTC', 'GMT' -> 'UTC'), or null if unknown. */
function resolvedZone(timeZone: string): string | null {
  let resolved = zoneCache.get(timeZone);
  if (resolved === undefined) {
    try {
      resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
    } catch {
      resolved = null;
    }
    zoneCache.set(timeZone, resolved);
  }
  return resolved;
}

function isFixedOffsetZone(timeZone: string): boolean {
  const z = resolvedZone(timeZone);
  return z === 'UTC' || (z !== null && /^Etc\/GMT[+-]\d{1,2}$/.test(z));
}

function rejectCronOffset(offsetMs: number | undefined, schedule: string | undefined, expression: string): void {
  if (offsetMs !== undefined && offsetMs !== 0) {
    throw new InvalidScheduleError(schedule, expression, `offsetMs (${String(offsetMs)}) applies only to @every schedules`);
  }
}

function assertInstant(ms: number, name: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) {
    throw new RangeError(`${name} must be a finite epoch time in ms, got ${String(ms)}`);
  }
}

function assertCount(n: number, name: string): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(n)}`);
  }
}
