/**
 * Cron specs: 5-field expressions and descriptors, evaluated by croner (`croner@11`) in their IANA
 * zone, with the rules croner does not decide for us (rules 2-7, 9 of the cron cases README).
 * Units: epoch milliseconds; cron triggers are whole minutes.
 */
import { Cron, type CronOptions } from 'croner';
import { InvalidScheduleError } from '../runtime/errors.js';
import { compiledCron, sharingEnabled, WeakValueCache, type CompiledCron } from './cron-compiled.js';
import { FIELD_DEFS, FieldError, LEAP_MONTH_DAYS, MONTH_LABELS, parseField, type ParsedField } from './cron-fields.js';
import { HOUR_MS, MINUTE_MS, TRIGGERS_BETWEEN_COUNT_LIMIT, assertInstant, latest, type ScheduleSpec } from './spec-base.js';
import { isFixedOffsetZone, resolvedZone } from './time-zones.js';

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

/**
 * Descriptors as 5-field expressions, as cronie `entry.c` defines them (rule 7). `@hourly` has a
 * `*` hour, so it is an interval job (cronie sets HR_STAR). `@reboot` is rejected.
 */
export const DESCRIPTORS: Readonly<Record<string, string>> = Object.freeze({
  yearly: '0 0 1 1 *',
  annually: '0 0 1 1 *',
  monthly: '0 0 1 * *',
  weekly: '0 0 * * 0',
  daily: '0 0 * * *',
  midnight: '0 0 * * *',
  hourly: '0 * * * *',
});

const specs = new WeakValueCache<CronScheduleSpec>();

/**
 * The way out of a 6-field expression of @nestjs/schedule or node-cron, whose first field is the
 * seconds: at second "0" the other five are the expression; seconds `*\/n` (n dividing 60) of an
 * otherwise all-star expression are an interval of n s. Nothing when the sixth field looks like a year (Quartz's last field).
 */
function secondsHint(texts: string[]): string {
  if (texts.length !== 6 || /^\d{4}$/.test(texts[5])) return '';
  const rest = texts.slice(1);
  if (/^0+$/.test(texts[0])) return `; with its seconds field "${texts[0]}" dropped it reads "${rest.join(' ')}"`;
  const step = /^(?:\*|0)\/(\d+)$/.exec(texts[0])?.[1];
  if (step !== undefined && 60 % Number(step) === 0 && rest.every((f) => f === '*'))
    return `; for every ${Number(step)} s use an interval: { every: '${Number(step)}s' } or @Interval('${Number(step)}s')`;
  return '';
}

/**
 * The cron spec of `expression` (5 fields, or a descriptor mapped to `fiveFields`) in `timeZone`:
 * one shared frozen spec per (expression, zone) while any holder keeps it, so 10,000 schedules of
 * one expression hold one spec; specs of different texts that compile to the same croner pattern
 * share its compiled form (cron-compiled.ts). Specs are pure, so sharing changes no trigger.
 * @throws InvalidScheduleError naming `schedule`, the expression and the problem (never cached).
 */
export function cronSpec(
  expression: string,
  fiveFields: string,
  timeZone: string,
  schedule: string | undefined,
  stored = false,
): CronScheduleSpec {
  if (!sharingEnabled()) return new CronScheduleSpec(expression, timeZone, compileCron(expression, fiveFields, timeZone, schedule, stored));
  // a stored expression's spec is kept apart: it parses steps a new definition's may not (cron-fields.ts)
  const key = `${stored ? 'stored\u0000' : ''}${timeZone}\u0000${expression}`;
  let spec = specs.get(key);
  if (spec === undefined) {
    const compiled = compileCron(expression, fiveFields, timeZone, schedule, stored);
    spec = new CronScheduleSpec(expression, timeZone, compiled);
    specs.set(key, spec);
  }
  return spec;
}

/** A cron spec evaluated by croner in its IANA zone (build one with {@link cronSpec}). */
export class CronScheduleSpec implements ScheduleSpec {
  readonly kind = 'cron' as const;
  readonly minPeriodMs: number;
  readonly #compiled: CompiledCron;

  constructor(
    readonly expression: string,
    readonly timeZone: string,
    compiled: CompiledCron,
  ) {
    this.#compiled = compiled;
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
    return this.#compiled.nextAfter(Math.max(afterMs, CRON_MIN_MS - 1));
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
    const back = this.#compiled.cron.previousRuns(cap, new Date(untilMs + 1));
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

/** Validates a 5-field expression and returns the shared compiled form of its croner pattern in the zone. */
function compileCron(
  expression: string,
  fiveFields: string,
  timeZone: string,
  schedule: string | undefined,
  stored: boolean,
): CompiledCron {
  const fail = (problem: string, cause?: unknown): never => {
    throw new InvalidScheduleError(schedule, expression, problem, cause === undefined ? undefined : { cause });
  };

  // Rule 2: exactly 5 fields; extra whitespace is fine.
  const texts = fiveFields.split(/\s+/).filter((f) => f !== '');
  // crontab(5)'s zone prefix (cronie, Kubernetes CronJobs, robfig/cron, asynq): the zone is an option here
  const prefix = /^(?:CRON_)?TZ=(.*)$/.exec(texts[0] ?? '');
  if (prefix) fail(`the zone prefix ${JSON.stringify(texts[0])} is not read here: give the zone as timeZone: ${JSON.stringify(prefix[1])}`);
  if (texts.length !== 5) {
    fail(
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${texts.length} field${texts.length === 1 ? '' : 's'}` +
        (texts.length === 6 || texts.length === 7 ? ` (seconds and year fields are not supported)${secondsHint(texts)}` : ''),
    );
  }
  const fields = FIELD_DEFS.map((def, i) => {
    try {
      return parseField(def, texts[i]!, stored);
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
      fail(
        `day-of-month ${JSON.stringify(dom.text)} never occurs in ${months} (month field ${JSON.stringify(month.text)}): ` +
          'the schedule would never fire',
      );
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
  const fixedOffset = fixedUtc || isFixedOffsetZone(timeZone);
  const interval = minute.star || hour.star;
  // the croner pattern, its options and the facts derived below are a function of this key
  const key = `${fixedUtc ? '' : timeZone}\u0000${domAndDow ? 1 : 0}\u0000${pattern}`;
  return compiledCron(key, () => {
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
        `no date matches day-of-month ${JSON.stringify(dom.text)}, month ${JSON.stringify(month.text)} ` +
          `and day-of-week ${JSON.stringify(dow.text)}: the schedule would never fire`,
      );
    }
    return { cron, minPeriodMs: cronMinPeriodMs(minute.values, hour.values, interval, fixedOffset) };
  });
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
    const map: Record<string, string> = {
      minute: 'minute',
      hour: 'hour',
      day: 'day-of-month',
      nearestWeekdays: 'day-of-month',
      month: 'month',
      dayOfWeek: 'day-of-week',
    };
    return ` in the ${map[named[1]!]} field`;
  }
  return '';
}
