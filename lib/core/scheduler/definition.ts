import { createHash } from 'node:crypto';
import { DEFAULTS } from '../defaults.js';
import { InvalidScheduleError } from '../errors.js';
import { isValidName } from '../redis/keys.js';
import { encodePayload } from '../queue/codec.js';
import { everySpec, parseSpec, type ScheduleSpec } from './spec.js';

/** What to do with triggers that came due while nobody led. @publicApi */
export type CatchUpPolicy = 'all' | 'latest' | 'none';
/** Whether a trigger is enqueued while the schedule's previous task is still pending or running. @publicApi */
export type OverlapPolicy = 'allow' | 'skip';

/**
 * A schedule: a name, when it fires, and the task each trigger enqueues. Durations are ms.
 * @publicApi
 */
export interface ScheduleDefinition {
  /** Unique, stable across processes (it is part of every trigger's dedup key). ≤ 200 chars of [A-Za-z0-9_.:-]. */
  name: string;
  /**
   * When it fires: a 5-field cron expression (`'0 3 * * *'`), a descriptor (`'@daily'`),
   * `'@every 90s'`, or `{ every: ms | '10s', offset?: ms }` (epoch-aligned interval, ≥ 1 s, whole seconds).
   */
  spec: string | { every: number | string; offset?: number };
  /** IANA zone of a cron spec. @defaultValue the scheduler's `timeZone` (default 'UTC') */
  timeZone?: string;
  /** Queue the triggers' tasks go to. @defaultValue 'default' */
  queue?: string;
  /** Task type each trigger enqueues. @defaultValue the schedule name */
  type?: string;
  /** Payload of each trigger's task (JSON-serialisable). @defaultValue null */
  payload?: unknown;
  /** Retries of each trigger's task. @defaultValue 25 */
  maxRetry?: number;
  /** Timeout of one attempt, ms (0 = none). @defaultValue 1800000 */
  timeout?: number;
  /** Missed triggers policy. @defaultValue 'all' */
  catchUp?: CatchUpPolicy;
  /** Missed triggers older than this are skipped (counted and logged), ms. @defaultValue 3600000 */
  catchUpWindow?: number;
  /** Most missed triggers caught up at once; the newest are kept. @defaultValue 100 */
  catchUpCap?: number;
  /** Overlap policy. @defaultValue 'allow' */
  overlap?: OverlapPolicy;
}

/** The registry form of a schedule (JSON in `<ns>:{<ns>:sched}:schedules`). */
export interface StoredSchedule {
  name: string;
  expression: string;
  timeZone: string;
  offsetMs: number;
  queue: string;
  type: string;
  /** JSON text */
  payload: string;
  maxRetry: number;
  timeoutMs: number;
  catchUp: CatchUpPolicy;
  catchUpWindowMs: number;
  catchUpCap: number;
  overlap: OverlapPolicy;
  /** Added through the runtime API (lives in Redis only) rather than declared in code. */
  runtime: boolean;
  /** Fingerprint of everything above: a change replaces the stored definition. */
  fp: string;
  paused?: boolean;
  /** When the schedule was first registered (Redis time, epoch ms): triggers before it never fire. */
  registeredAt?: number;
}

const DEF_KEYS = new Set([
  'name',
  'spec',
  'timeZone',
  'queue',
  'type',
  'payload',
  'maxRetry',
  'timeout',
  'catchUp',
  'catchUpWindow',
  'catchUpCap',
  'overlap',
]);

/** The spec of a schedule definition, parsed (throws InvalidScheduleError). */
export function specOf(def: Pick<ScheduleDefinition, 'name' | 'spec' | 'timeZone'>, defaultTimeZone: string): ScheduleSpec {
  const timeZone = def.timeZone ?? defaultTimeZone;
  if (typeof def.spec === 'object' && def.spec !== null) {
    return everySpec(def.spec.every, { schedule: def.name, timeZone: 'UTC', offsetMs: def.spec.offset });
  }
  return parseSpec(def.spec, { schedule: def.name, timeZone });
}

/** The spec of a stored definition. */
export function storedSpec(s: StoredSchedule): ScheduleSpec {
  return parseSpec(s.expression, { schedule: s.name, timeZone: s.timeZone, offsetMs: s.offsetMs || undefined });
}

/**
 * Validates a definition and builds its registry form.
 * @throws InvalidScheduleError naming the schedule, the value and the problem (at registration, never at fire time).
 */
export function toStored(
  def: ScheduleDefinition,
  defaultTimeZone: string,
  runtime: boolean,
): { stored: StoredSchedule; spec: ScheduleSpec } {
  const name = def?.name;
  if (!isValidName(name))
    throw new InvalidScheduleError(undefined, String(name), 'the schedule name must be 1-200 characters of [A-Za-z0-9_.:-]');
  const bad = (value: unknown, problem: string): never => {
    throw new InvalidScheduleError(name, typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), problem);
  };
  for (const key of Object.keys(def)) if (!DEF_KEYS.has(key)) bad(key, `unknown schedule option "${key}"`);
  const spec = specOf(def, defaultTimeZone);
  const queue = def.queue ?? DEFAULTS.queue;
  if (!isValidName(queue)) bad(queue, 'queue: must be 1-200 characters of [A-Za-z0-9_.:-]');
  const type = def.type ?? name;
  if (typeof type !== 'string' || type.length === 0) bad(type, 'type: must be a non-empty string');
  const int = (v: unknown, what: string, min: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) bad(v, `${what}: expected an integer >= ${min}`);
    return v as number;
  };
  const maxRetry = int(def.maxRetry ?? DEFAULTS.maxRetry, 'maxRetry', 0);
  const timeoutMs = int(def.timeout ?? DEFAULTS.timeoutMs, 'timeout (ms)', 0);
  const catchUp = def.catchUp ?? DEFAULTS.catchUp;
  if (!['all', 'latest', 'none'].includes(catchUp)) bad(catchUp, "catchUp: expected 'all', 'latest' or 'none'");
  const catchUpWindowMs = int(def.catchUpWindow ?? DEFAULTS.catchUpWindowMs, 'catchUpWindow (ms)', 0);
  const catchUpCap = int(def.catchUpCap ?? DEFAULTS.catchUpCap, 'catchUpCap', 1);
  const overlap = def.overlap ?? DEFAULTS.overlap;
  if (!['allow', 'skip'].includes(overlap)) bad(overlap, "overlap: expected 'allow' or 'skip'");
  let payload: string;
  try {
    payload = encodePayload(type, def.payload === undefined ? null : def.payload);
  } catch (err) {
    throw new InvalidScheduleError(name, 'payload', (err as Error).message, { cause: err });
  }
  const body = {
    name,
    expression: typeof def.spec === 'object' ? `@every ${spec.everyMs! / 1000}s` : def.spec,
    timeZone: spec.timeZone,
    offsetMs: spec.offsetMs ?? 0,
    queue,
    type,
    payload,
    maxRetry,
    timeoutMs,
    catchUp,
    catchUpWindowMs,
    catchUpCap,
    overlap,
    runtime,
  };
  const fp = createHash('sha1').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  return { stored: { ...body, fp }, spec };
}

/**
 * Lifetime of a fired trigger's dedup key, ms: it must outlive any handover and any catch-up —
 * at least 1 h, two periods, and the catch-up window.
 */
export function fireDedupTtlMs(stored: StoredSchedule, spec: ScheduleSpec): number {
  return Math.max(DEFAULTS.fireDedupMinTtlMs, 2 * spec.minPeriodMs, stored.catchUpWindowMs + 60_000);
}

/**
 * How long before its instant a trigger is enqueued, ms: up to 1 s, and at most half the period,
 * so workers hold the task and start it at the instant (fire lag then does not include the leader's
 * round trips). 0 for overlap `skip`: whether the previous task still runs is decided at the
 * instant, not ahead of it.
 */
export function fireLeadMs(stored: StoredSchedule, spec: ScheduleSpec): number {
  return stored.overlap === 'skip' ? 0 : Math.min(1000, Math.floor(spec.minPeriodMs / 2));
}

/** The dedup key of a trigger and the id of its task: `<schedule>:<trigger-unix>` (unix seconds). */
export function triggerKey(schedule: string, triggerAtMs: number): string {
  return `${schedule}:${Math.floor(triggerAtMs / 1000)}`;
}
