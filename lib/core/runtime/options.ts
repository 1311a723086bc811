/**
 * The one checker of option values. The server, scheduler and client options, schedule
 * definitions, the Inspector and the Nest module all report through it, so each rule (an integer
 * bound, a name, a time zone) and its message is written once. A problem reads
 * `<key>: expected <what>, got <value>`; an unknown key reads `unknown option "<key>"`.
 */
import { InvalidOptionsError } from './errors.js';
import { show } from './shown-text.js';
export { show }; // its home is shown-text.ts (errors.ts uses it too); imported from here by most modules
import { isValidName } from '../redis/keys.js';
import { isTimeZone, TIME_ZONE_RULE } from '../scheduler/time-zones.js';

/** What a namespace, queue or schedule name must be (the rule of `isValidName`). */
export const NAME_RULE = '1-200 characters of [A-Za-z0-9_.:-], not "." or ".."';

/** One problem of an options object. */
export interface OptionProblem {
  /** Path of the option ('concurrency', 'queues.mail', 'defaults.queue'); '' for the object itself. */
  readonly key: string;
  /** What is wrong, without the key and the value: 'expected an integer >= 1'. */
  readonly problem: string;
  /** The offending value (for an unknown option: its key). */
  readonly value: unknown;
  /** Whether the message ends with `, got <value>`. */
  readonly got: boolean;
}

/** Options checked: what they resolve to (defaults applied; meaningful only without problems) and every problem. */
export interface Checked<T> {
  readonly value: T;
  readonly problems: readonly OptionProblem[];
}

/** The message of a problem: `<key>: <problem>[, got <value>]` (`withValue: false` leaves the value out). */
export function describeProblem(p: OptionProblem, withValue = true): string {
  const text = p.key ? `${p.key}: ${p.problem}` : p.problem;
  return withValue && p.got ? `${text}, got ${show(p.value)}` : text;
}

/** What to use instead of an option key of another library (BullMQ's `prefix`), said after `unknown option "<key>"`. */
export const FOREIGN_KEY_HINTS: Readonly<Record<string, string>> = {
  prefix: 'use `namespace`: the key prefix of the app, default "chronos"',
};

/**
 * Instants nearer the epoch than this, ms (before 1973-03-03, after 1966-10-31), are refused where
 * epoch ms are asked for: epoch *seconds* of any time from 1973 to 5138 fall there (10 digits until
 * 2286), and nobody means January 1970. The CLI's `--from`/`--to` keep the same rule (cli/context.ts).
 */
export const EPOCH_MS_MIN = 1e11;

/**
 * The problem of an instant given in epoch ms (a number, or a Date's time) that is too near the epoch
 * to be one ({@link EPOCH_MS_MIN}): what it reads as, and, when it looks like epoch seconds, the ms
 * it meant (`endAt: Math.floor(Date.now() / 1000) + 3600` ended a schedule in January 1970, and a
 * `processAt` so given ran the task at once; trial 47). `undefined` when the instant may be meant.
 * @param given the value as the caller gave it (a number or a Date), for the message
 */
export function nearEpochProblem(ms: number, given: unknown): string | undefined {
  if (!(Math.abs(ms) < EPOCH_MS_MIN)) return undefined;
  const at = new Date(ms).toISOString();
  const seconds = ms >= 1e9 && Number.isInteger(ms) && ms * 1000 < 8.64e15;
  if (given instanceof Date) {
    const meant = seconds ? `: a Date made of epoch seconds? new Date(seconds * 1000) is ${new Date(ms * 1000).toISOString()}` : '';
    return `expected an instant after 1973-03-03, got ${at}${meant}`;
  }
  const meant = seconds ? `; epoch seconds? in ms that is ${ms * 1000} (${new Date(ms * 1000).toISOString()})` : '';
  return `expected epoch ms of an instant after 1973-03-03, got ${show(given)}, which in ms is ${at}${meant}`;
}

/** The longest delay Node's timers take, ms (2^31 − 1, about 24.8 days; Node docs, `setTimeout`). */
export const TIMER_MAX_MS = 2_147_483_647;

/**
 * The longest lifetime of a key that Chronos has Redis keep, ms: `Number.MAX_SAFE_INTEGER` (about
 * 285,000 years). A larger number reaches Redis as `1e+21` or past its clock's 64-bit range, and
 * the script that sets the key (`SET … PX`) fails with `ERR value is not an integer or out of range`.
 */
export const KEY_TTL_MAX_MS = Number.MAX_SAFE_INTEGER;

/**
 * Collects the problems of one options object. Every check passes an `undefined` value (the
 * option is absent: its default applies) unless told it is required, and returns whether the
 * value passed.
 */
export class OptionProblems {
  readonly list: OptionProblem[] = [];

  /** The messages, in the order found. */
  get issues(): string[] {
    return this.list.map((p) => describeProblem(p));
  }

  /** Records a problem without a value: `<key>: <problem>` (or `<problem>` for key ''). */
  add(key: string, problem: string, value?: unknown): void {
    this.list.push({ key, problem, value, got: false });
  }

  /** Records `<key>: expected <what>, got <value>`; returns false. */
  expected(key: string, what: string, value: unknown): false {
    this.list.push({ key, problem: `expected ${what}`, value, got: true });
    return false;
  }

  /**
   * Records `unknown option "<k>"` (under `key` for a nested object) for each key of `options` not in
   * `known`, with what to use instead: the door's own `hints` (another library's options at that door,
   * migrant-hints.ts), else for a top-level key {@link FOREIGN_KEY_HINTS}.
   */
  unknownKeys(options: object, known: ReadonlySet<string>, key = '', hints?: Readonly<Record<string, string>>): void {
    for (const k of Object.keys(options)) {
      if (known.has(k)) continue;
      // FOREIGN_KEY_HINTS at the top level only: a nested `metrics: { prefix }` is not a namespace
      const instead =
        hints !== undefined && Object.hasOwn(hints, k)
          ? hints[k]
          : key === '' && Object.hasOwn(FOREIGN_KEY_HINTS, k)
            ? FOREIGN_KEY_HINTS[k]
            : '';
      this.add(key, `unknown option "${k}"${instead ? ` (${instead})` : ''}`, k);
    }
  }

  /**
   * An integer from `min` to `max`, by default `Number.MAX_SAFE_INTEGER` (2^53 − 1); `unit: 'ms'`
   * says the unit in the message, which names `max` only for an integer past it. A larger one is no
   * exact integer in JavaScript, nor in Redis's Lua (doubles), and reaches Redis as `1e+21` or more
   * digits than a command takes (`concurrency: 1e300` became `XREADGROUP … COUNT 1e+300`, and the
   * server never fetched a task: `ERR value is not an integer`, trial 24).
   */
  int(key: string, value: unknown, min: number, unit?: 'ms', max = Number.MAX_SAFE_INTEGER): boolean {
    if (value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)) return true;
    const u = unit ? ` (${unit})` : '';
    const tooLarge = typeof value === 'number' && Number.isInteger(value) && value >= min;
    return this.expected(key, tooLarge ? `an integer from ${min} to ${max}${u}` : `an integer >= ${min}${u}`, value);
  }

  /**
   * A duration that becomes the lifetime of a key in Redis, ms: an integer from `min` to
   * {@link KEY_TTL_MAX_MS} (a dedup key's `dedupTtl`; a schedule's `catchUpWindow`, which its fired
   * triggers' dedup keys outlive). Checked where it is given, since past the bound every script
   * that sets the key fails (for a schedule: at fire time, with every trigger of its batch).
   */
  ttlMs(key: string, value: unknown, min: number): boolean {
    if (value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= KEY_TTL_MAX_MS))
      return true;
    return this.expected(key, `an integer from ${min} to ${KEY_TTL_MAX_MS} (ms)`, value);
  }

  /**
   * A duration that runs a Node timer, ms: an integer from `min` to {@link TIMER_MAX_MS} (Node runs a
   * longer `setTimeout` after 1 ms, so a larger value would turn a lease, a loop or a deadline into a
   * busy loop or an instant failure).
   */
  timerMs(key: string, value: unknown, min: number): boolean {
    if (value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= TIMER_MAX_MS)) return true;
    return this.expected(key, `an integer from ${min} to ${TIMER_MAX_MS} (ms; Node's longest timer, about 24.8 days)`, value);
  }

  /** true or false. */
  bool(key: string, value: unknown): boolean {
    return value === undefined || typeof value === 'boolean' || this.expected(key, 'true or false', value);
  }

  /** A namespace, queue or schedule name ({@link NAME_RULE}). */
  name(key: string, value: unknown, required = false): boolean {
    return (value === undefined && !required) || isValidName(value) || this.expected(key, NAME_RULE, value);
  }

  /** An IANA time zone (the rule of `isTimeZone`). */
  timeZone(key: string, value: unknown): boolean {
    return value === undefined || isTimeZone(value) || this.expected(key, TIME_ZONE_RULE, value);
  }

  /** A function; `shape` describes it, e.g. '(retried, error, task) => ms'. */
  fn(key: string, value: unknown, shape: string): boolean {
    return value === undefined || typeof value === 'function' || this.expected(key, `a function ${shape}`, value);
  }

  /**
   * A `logger` option: `false` (no messages) or an object with `log`, `warn` and `error` methods (and
   * `debug`, if any, a method): the shape of `ChronosLogger`. A pino or winston logger has no such
   * `log(message)`: it is refused here rather than failing at the first message.
   */
  logger(key: string, value: unknown): boolean {
    if (value === undefined || value === false) return true;
    const o = value as Record<string, unknown> | null;
    const ok =
      typeof o === 'object' &&
      o !== null &&
      ['log', 'warn', 'error'].every((m) => typeof o[m] === 'function') &&
      (o.debug === undefined || typeof o.debug === 'function');
    if (ok) return true;
    const what = 'false or a logger with log(message), warn(message) and error(message, error?) methods (ChronosLogger)';
    if (typeof o !== 'object' || o === null) return this.expected(key, what, value);
    const missing = ['log', 'warn', 'error', 'debug'].filter((m) => typeof o[m] !== 'function' && (m !== 'debug' || o[m] !== undefined));
    const wrap = '(wrap it: { log: (m) => l.info(m), warn: (m) => l.warn(m), error: (m, e) => l.error(e, m) })';
    this.add(key, `expected ${what}; got an object with keys ${JSON.stringify(Object.keys(o))}, no method ${missing.join(', ')} ${wrap}`);
    return false;
  }

  /** One of `allowed` (strings). */
  oneOf(key: string, value: unknown, allowed: readonly string[]): boolean {
    if (value === undefined || allowed.includes(value as string)) return true;
    const list = allowed.map((a) => `'${a}'`);
    return this.expected(key, `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`, value);
  }

  /** Adds problems found elsewhere (another options object's), e.g. under other keys. */
  merge(problems: readonly OptionProblem[]): void {
    this.list.push(...problems);
  }

  /** @throws InvalidOptionsError (`Invalid <subject>`) listing every problem, if there is one. */
  throwIfAny(subject: string): void {
    if (this.list.length) throw new InvalidOptionsError(this.issues, subject);
  }
}

/**
 * The resolved options of a check, or the error listing its problems.
 * @throws InvalidOptionsError (`Invalid <subject>`) listing every problem.
 */
export function orThrow<T>(checked: Checked<T>, subject: string): T {
  if (checked.problems.length)
    throw new InvalidOptionsError(
      checked.problems.map((p) => describeProblem(p)),
      subject,
    );
  return checked.value;
}

/**
 * The value if it is a valid name (see {@link NAME_RULE}).
 * @throws InvalidOptionsError (`Invalid <subject>`) naming the key and the value otherwise.
 */
export function assertName(key: string, value: unknown, subject: string): string {
  const p = new OptionProblems();
  p.name(key, value, true);
  p.throwIfAny(subject);
  return value as string;
}

/** The message of a bad name (`<key>: expected 1-200 characters of …, got <value>`), or undefined if it is valid. */
export function nameProblem(key: string, value: unknown): string | undefined {
  const p = new OptionProblems();
  p.name(key, value, true);
  return p.issues[0];
}
