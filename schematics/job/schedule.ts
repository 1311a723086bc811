// The job schematic's schedule: from `--cron` (what `nest g -c @chronos/nest job <name>` asks for
// in a terminal, where an interval is accepted too: `0 3 * * *`, `CRON_TZ=Europe/Budapest 0 3 * * *`,
// `10s`, `@every 10s`), `--every` and `--tz`. Checked by the engine's own spec code,
// so a schedule the app would refuse at boot is refused here, with the same message; and its
// first triggers are computed by it for the generated test.
import { everySpec, nextTriggers, parseDurationMs, parseSpec } from '../../lib/core/scheduler/spec.js';
import { SchematicInputError } from '../utils/project.js';

/** What the job's decorator says: `@Cron(expression, { timeZone })` or `@Interval(every)`. */
export type JobSchedule = { kind: 'cron'; expression: string; timeZone?: string } | { kind: 'interval'; every: string | number };

/** The schedule options of the job schematic (schema.json). */
export interface ScheduleInput {
  /** A cron expression, `CRON_TZ=<zone> <expression>`, or an interval (`10s`, `@every 10s`). */
  cron?: string;
  every?: string | number;
  tz?: string;
}

/**
 * `CRON_TZ=<zone> <expr>` (or `TZ=<zone> <expr>`): the zone prefix of crontab(5) as cronie,
 * Kubernetes CronJobs, robfig/cron and asynq read it.
 */
const ZONE_PREFIX = /^(?:CRON_)?TZ=(\S+)\s+(.+)$/;

const HOW =
  'give --cron "<expression>" (5 fields, e.g. "0 3 * * *"; with --tz <IANA zone>) or --every <duration> (e.g. 10s, 15m, 1h): ' +
  'npx schematics @chronos/nest:job <name> --cron "0 3 * * *". (`nest g -c @chronos/nest job <name>` cannot pass these options; it asks for the schedule in a terminal)';

/**
 * The job's schedule from the options, checked by the engine's spec parser.
 * @throws SchematicInputError when none or both of cron and every are given, when --tz goes with an
 *   interval, or when the engine refuses the expression, duration or zone (its message, which
 *   names the value)
 */
export function resolveSchedule(input: ScheduleInput, scheduleName: string): JobSchedule {
  const given = [input.cron, input.every].filter((v) => v !== undefined && String(v).trim() !== '');
  if (given.length > 1)
    throw new SchematicInputError(`Give --cron or --every, not both (got --cron ${quote(input.cron)} and --every ${quote(input.every)})`);
  let job: JobSchedule;
  if (input.every !== undefined && input.every !== '') job = { kind: 'interval', every: normalizeEvery(input.every) };
  else if (input.cron !== undefined && String(input.cron).trim() !== '') job = fromText(String(input.cron).trim(), input.tz);
  else throw new SchematicInputError(`No schedule for job "${scheduleName}": ${HOW}`);
  if (job.kind === 'interval' && input.tz !== undefined && input.tz !== '') {
    throw new SchematicInputError(`--tz ${quote(input.tz)} applies to --cron only: intervals are epoch-aligned, the same in every zone`);
  }
  check(job, scheduleName);
  return job;
}

function fromText(text: string, tz: string | undefined): JobSchedule {
  const zoned = ZONE_PREFIX.exec(text);
  if (zoned) {
    if (tz !== undefined && tz !== '' && tz !== zoned[1]) {
      throw new SchematicInputError(`Two time zones: ${quote(zoned[1])} in the schedule and --tz ${quote(tz)}`);
    }
    return { kind: 'cron', expression: zoned[2]!.trim(), timeZone: zoned[1] };
  }
  // an interval where a cron expression was asked for: `10s` is not a cron expression, and
  // `@every 10s` reads better as @Interval('10s') than as @Cron('@every 10s') (the same triggers)
  const every = /^@every\s+(\S+)$/i.exec(text)?.[1] ?? (isDuration(text) ? text : undefined);
  if (every !== undefined) return { kind: 'interval', every: normalizeEvery(every) };
  return { kind: 'cron', expression: text, timeZone: tz === '' ? undefined : tz };
}

function isDuration(text: string): boolean {
  try {
    parseDurationMs(text);
    return true;
  } catch {
    return false;
  }
}

/** The schematics CLI reads `--every 10000` as the number 10000 (ms), `--every 10s` as text. */
function normalizeEvery(every: string | number): string | number {
  if (typeof every === 'number') return every;
  const text = every.trim();
  return /^\d+$/.test(text) ? Number(text) : text;
}

function check(job: JobSchedule, schedule: string): void {
  try {
    if (job.kind === 'cron') parseSpec(job.expression, { timeZone: job.timeZone, schedule });
    else everySpec(job.every, { schedule });
  } catch (err) {
    throw new SchematicInputError((err as Error).message, { cause: err });
  }
}

/** The first `n` triggers at or after `fromMs` (epoch ms), by the engine's spec math. */
export function firstTriggers(job: JobSchedule, fromMs: number, n: number): number[] {
  const spec = job.kind === 'cron' ? parseSpec(job.expression, { timeZone: job.timeZone }) : everySpec(job.every);
  return nextTriggers(spec, fromMs - 1, n);
}

/** The decorator line of the job: `@Cron('0 3 * * *', { name, timeZone })` or `@Interval('10s', { name })`. */
export function decorator(job: JobSchedule, scheduleName: string): string {
  if (job.kind === 'cron') {
    const zone = job.timeZone ? `, timeZone: ${quote(job.timeZone)}` : '';
    return `@Cron(${quote(job.expression)}, { name: ${quote(scheduleName)}${zone} })`;
  }
  const every = typeof job.every === 'number' ? String(job.every) : quote(job.every);
  return `@Interval(${every}, { name: ${quote(scheduleName)} })`;
}

/** What the schedule is, in words for a comment or a test title: `0 3 * * * (Europe/Budapest)`, `every 10s`. */
export function describeSchedule(job: JobSchedule): string {
  if (job.kind === 'cron') return `${job.expression}${job.timeZone ? ` (${job.timeZone})` : ' (UTC)'}`;
  return typeof job.every === 'number' ? `every ${job.every} ms` : `every ${job.every}`;
}

/** A TypeScript single-quoted string literal. */
export function quote(value: unknown): string {
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
