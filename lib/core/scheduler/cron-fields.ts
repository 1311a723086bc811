/**
 * Cron field parsing (rules 2, 9, 10 of the cron cases README): one field's text into its values
 * and the form croner is given, with the errors a user sees.
 */

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DOW_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
export const MONTH_LABELS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
/** Days per month in a leap year, so that `29 2` is possible (rule 9). */
export const LEAP_MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export interface FieldDef {
  readonly name: 'minute' | 'hour' | 'day-of-month' | 'month' | 'day-of-week';
  readonly min: number;
  /** Largest value; 7 for day-of-week (7 and 0 are Sunday, rule 2). */
  readonly max: number;
  /** 3-letter names, case-insensitive (rule 2); value = index + nameBase. */
  readonly names?: readonly string[];
  readonly nameBase?: number;
}

export const FIELD_DEFS: readonly FieldDef[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: DOW_NAMES, nameBase: 0 },
];

export interface ParsedField {
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

/** @internal A cron field that does not parse; its message says what is wrong with the item (the cron parser adds the field and turns it into an InvalidScheduleError). */
export class FieldError extends Error {}

/**
 * Parses one field: a comma list of `*`, `n`, `a-b`, each optionally `/step`, plus `N/step` =
 * `N-max/step` (rule 10). Day-of-week ranges ending in 0/SUN end at 7 (cronie get_range, rule 2).
 * Extensions (rule 10, cron-parser/Quartz): `L` in day-of-month, `nL` and `n#k` in day-of-week.
 * A step must be at most the field's range (59 for minutes); `stored`: a step of the range + 1 (`*\/60`,
 * accepted by earlier versions) parses, so a schedule stored with it keeps firing.
 */
export function parseField(def: FieldDef, text: string, stored = false): ParsedField {
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
      // a step of the field's span or more selects the first value alone (croner takes "*/60" as minute 0, hourly):
      // refused, naming the range and the value it would select
      // (a stored definition's step of the span itself, which an earlier version accepted, still parses: it keeps firing)
      const last = def.name === 'day-of-week' ? 6 : def.max;
      if (step > last - def.min && !(stored && step === last - def.min + 1)) {
        const first = /^\d+/.exec(base)?.[0] ?? (base === '*' ? String(def.min) : undefined);
        const alone = first === undefined ? '' : `; it would select ${first} alone: write "${first}" for that`;
        throw new FieldError(
          `"${item}": step ${step} is larger than the field's range ${def.min}-${last} (at most ${last - def.min})${alone}`,
        );
      }
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
          `reversed range ${JSON.stringify(base)}: the first value must not be larger than the second ` +
            '(wrap-around ranges are not supported; write e.g. 22-23,0-2)',
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
    throw new FieldError(`${JSON.stringify(token)} is not a ${def.names ? 'number or 3-letter name' : 'number'}`);
  }
  if (v < def.min || v > def.max) {
    throw new FieldError(`${token} is out of range ${def.min}-${def.max}${def.name === 'day-of-week' ? ' (0 and 7 are Sunday)' : ''}`);
  }
  return v;
}
