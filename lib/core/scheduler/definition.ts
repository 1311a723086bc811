import { DEFAULTS } from '../runtime/defaults.js';
import { InvalidScheduleError } from '../runtime/errors.js';
import { KEY_TTL_MAX_MS, show } from '../runtime/options.js';
import { FIRE_LEAD, FIRE_MODE, type FireMode } from '../redis/protocol.js';
import type { StoredBounds } from './schedule-bounds.js';
import { everySpec, parseDurationMs, parseSpec, type ScheduleSpec } from './spec.js';
import { boundedSpec } from './spec-bounded.js';

// the checks and the registry form of a definition are in definition-check.ts; toStored stays importable from here
export { toStored } from './definition-check.js';

/** The fire modes that enqueue a trigger (every mode but advance-only), one per overlap policy. */
export type EnqueueFireMode = Exclude<FireMode, typeof FIRE_MODE.advanceOnly>;

/** What to do with triggers that came due while nobody led. @publicApi */
export type CatchUpPolicy = 'all' | 'latest' | 'none';
/**
 * What a trigger does while the schedule's previous task is still live (pending, running or waiting
 * for a retry), cluster-wide: `allow` enqueues it anyway; `skip` drops it (counted); `buffer-one`
 * keeps one waiting, started when the previous task ends, and drops further ones (counted);
 * `cancel-previous` enqueues it and aborts the previous task's signal with a `TaskSupersededError`.
 * Temporal's names: AllowAll, Skip, BufferOne, CancelOther (README "Catch-up, pause, changes, overlap").
 * @publicApi
 */
export type OverlapPolicy = 'allow' | 'skip' | 'buffer-one' | 'cancel-previous';

/** Every {@link OverlapPolicy}, in the order the docs list them. */
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['allow', 'skip', 'buffer-one', 'cancel-previous'];

/**
 * A schedule: a name, when it fires, and the task each trigger enqueues. Durations are ms.
 * @publicApi
 */
export interface ScheduleDefinition {
  /** Unique, stable across processes (it is part of every trigger's dedup key). ≤ 200 chars of [A-Za-z0-9_.:-], not `.` or `..`. */
  name: string;
  /**
   * When it fires: a 5-field cron expression (`'0 3 * * *'`), a descriptor (`'@daily'`),
   * `'@every 90s'`, or `{ every: ms | '10s', offset?: ms | '2s' }` (epoch-aligned interval, ≥ 1 s, whole seconds).
   * Any other key in the object (BullMQ's `limit`, `pattern`, `tz`…) is an InvalidScheduleError naming it.
   */
  spec:
    | string
    | {
        /** The period: ms (a number) or a duration string such as `'10s'` or `'1h30m'`; ≥ 1 s, whole seconds. */
        every: number | string;
        /**
         * Shift of the triggers from the epoch-aligned grid: ms (a number) or a duration string such as
         * `'2s'` or `'1m30s'` (the forms `every` takes); whole seconds, less than the period. @defaultValue 0
         */
        offset?: number | string;
      };
  /**
   * IANA zone of a cron spec; checked whatever the spec (an InvalidScheduleError names one that is
   * not a zone), ignored by an interval. @defaultValue the scheduler's `timeZone` (default 'UTC')
   */
  timeZone?: string;
  /** Queue the triggers' tasks go to. @defaultValue 'default' */
  queue?: string;
  /** Task type each trigger enqueues: as an enqueue's, 1 to 200 characters without lone surrogates. @defaultValue the schedule name */
  type?: string;
  /** Payload of each trigger's task (JSON-serialisable). @defaultValue null */
  payload?: unknown;
  /** Retries of each trigger's task. @defaultValue 25 */
  maxRetry?: number;
  /** Timeout of one attempt, ms (0 = none). @defaultValue 1800000 */
  timeout?: number;
  /** Missed triggers policy. @defaultValue 'all' */
  catchUp?: CatchUpPolicy;
  /**
   * Missed triggers older than this are skipped (counted and logged), ms (an integer from 0 to
   * 2^53 − 1: its triggers' dedup keys live in Redis a minute longer); so is a trigger's task that
   * would start later than this after its instant. A window under 1,000 ms acts as 1,000: a trigger
   * up to 1 s late is on time (plan.ts LATE_TOLERANCE_MS). @defaultValue 3600000
   */
  catchUpWindow?: number;
  /** Most missed triggers caught up at once; the newest are kept. @defaultValue 100 */
  catchUpCap?: number;
  /**
   * What a trigger does while the previous task of the schedule is still live: `'allow'`, `'skip'`,
   * `'buffer-one'` or `'cancel-previous'` (see {@link OverlapPolicy}). @defaultValue 'allow'
   */
  overlap?: OverlapPolicy;
  /**
   * Spread of the starts, ms (an integer, 0 to 86,400,000; less than the period of an every-spec):
   * each trigger's task starts a deterministic shift in `[0, jitter)` after the trigger's instant —
   * the same on every replica (a hash of `<name>:<trigger unix ms>`). The trigger itself (its dedup
   * key, task id, `triggerAt`, catch-up, pause, overlap, maxRuns) stays at its nominal instant; the
   * task waits as a delayed task until the shifted one. @defaultValue 0 (none)
   */
  jitter?: number;
  /** No trigger before this instant (inclusive): epoch ms or a Date, after 1973-03-03 (a smaller number is epoch seconds: refused). @defaultValue none */
  startAt?: number | Date;
  /** No trigger at or after this instant (exclusive): epoch ms or a Date, after `startAt` and after 1973-03-03 (a smaller number is epoch seconds: refused). The schedule stays registered (shown as ended). @defaultValue none */
  endAt?: number | Date;
  /**
   * The most triggers the schedule enqueues in total, fleet-wide (an integer from 1 to 2^53 − 1), counted in Redis
   * when one is enqueued (not on a duplicate, skip, pause or fence). A new definition keeps the count
   * unless its maxRuns differs (then it starts afresh; a definition without one drops the count). An operator's trigger or backfill is not counted. @defaultValue none
   */
  maxRuns?: number;
  /**
   * The group of each trigger's task (enqueue option `group`: served round-robin with the queue's
   * other groups, under its per-group limits). 1 to 200 characters, no control characters.
   */
  group?: string;
  /**
   * Labels to find the schedule by (`Inspector.schedulePage({ labels })`, the CLI's
   * `schedule ls --label k=v`, the console), e.g. `{ tenant: 'acme', kind: 'digest' }`: a plain
   * object (not a Map: `Object.fromEntries(map)`). At most 16 labels; a key is 1 to 64 characters of `[A-Za-z0-9_./-]`, not `__proto__`; a value is 0
   * to 128 characters without control characters or `=`. Changing only the labels of a schedule
   * changes neither its triggers, nor its generation (no fence). @defaultValue none
   */
  labels?: Record<string, string>;
}

/** The registry form of a schedule, decoded (its shard's `schedules` hash holds it as JSON: stored-form.ts). */
export interface StoredSchedule extends StoredBounds {
  /** The schedule's name (part of every trigger's dedup key). */
  name: string;
  /** The spec as text: the cron expression or descriptor given, or `@every <n>s` for an `{ every }` spec. */
  expression: string;
  /** IANA zone the expression is read in (`UTC` for every-specs). */
  timeZone: string;
  /** Offset of an every-spec from the epoch-aligned grid, ms; 0 when none (and for cron). */
  offsetMs: number;
  /** Queue the triggers' tasks go to. */
  queue: string;
  /** Task type each trigger enqueues. */
  type: string;
  /** JSON text */
  payload: string;
  /** Retries of each trigger's task after a failure before it is dead. */
  maxRetry: number;
  /** Timeout of one attempt of each trigger's task, ms (0 = none). */
  timeoutMs: number;
  /** What the leader does with triggers that came due while nobody led. */
  catchUp: CatchUpPolicy;
  /** Missed triggers older than this are skipped (counted and logged), ms. */
  catchUpWindowMs: number;
  /** Most missed triggers caught up at once; the newest are kept. */
  catchUpCap: number;
  /** What a trigger does while the previous task of the schedule is still live (see {@link OverlapPolicy}). */
  overlap: OverlapPolicy;
  /** The group of each trigger's task; absent for none. */
  group?: string;
  /** The schedule's labels (key order not kept: the scripts re-encode the JSON); absent for none. */
  labels?: Record<string, string>;
  /** Added through the runtime API (lives in Redis only) rather than declared in code. */
  runtime: boolean;
  /** Fingerprint of everything above: a change replaces the stored definition. */
  fp: string;
  /**
   * Fingerprint of everything above but the labels, when it has labels (else it is `fp`): a
   * replaced definition with the same one changed its labels only and keeps its generation (no fence).
   */
  tfp?: string;
  /** True while the schedule is paused fleet-wide (its triggers are skipped). */
  paused?: boolean;
  /** When the schedule was first registered (Redis time, epoch ms): triggers before it never fire. */
  registeredAt?: number;
  /**
   * When its current timing took effect (Redis time, epoch ms): its registration, or the storing of
   * a new spec, zone, offset, queue or bounds (startAt, endAt, maxRuns). Triggers before it never fire (a new spec is not backdated).
   */
  changedAt?: number;
  /** When it was last resumed (Redis time, epoch ms): the triggers of the pause before it are skipped. */
  resumedAt?: number;
  /**
   * The registry version of its last change (pause, resume, new definition): triggers are planned
   * under it, and fire.lua refuses those planned under an older one than the queue's slot holds.
   */
  generation?: number;
}

/**
 * What to use instead of a key that is not an object spec's (`every`, `offset`): BullMQ's repeat
 * options, which a migrant puts in a spec object or in `@Cron`/`@Interval` options.
 */
export const REPEAT_KEY_HINTS: Readonly<Record<string, string>> = {
  pattern: 'use the cron expression itself as the spec (spec: "0 3 * * *", @Cron("0 3 * * *"))',
  cron: 'use the cron expression itself as the spec (spec: "0 3 * * *", @Cron("0 3 * * *"))',
  limit: 'use `maxRuns`',
  startDate: 'use `startAt`',
  endDate: 'use `endAt`',
  tz: 'use `timeZone`',
  utc: 'use `timeZone` (UTC is the default)',
  immediately: 'triggers fall on the epoch-aligned grid (shift it with `offset`); to run once now, enqueue a task',
  jobId: "the schedule's `name` names its triggers' tasks (`<name>:<trigger-unix>`)",
  key: "the schedule's `name` names its triggers' tasks (`<name>:<trigger-unix>`)",
};

/**
 * Checks that an object spec has no key but `every` and `offset` (BullMQ's `limit`, `pattern`, `tz`…
 * were ignored in silence or refused as a missing `every`). Every path that takes a definition comes
 * through {@link specOf}; the Nest explorer calls this for an object given to `@Cron`/`@Interval`.
 * @throws InvalidScheduleError naming the schedule and the key(s), with what to use instead.
 */
export function checkSpecKeys(spec: object, schedule: string | undefined): void {
  let unknown: string[] | undefined;
  for (const k in spec) if (Object.hasOwn(spec, k) && k !== 'every' && k !== 'offset') (unknown ??= []).push(k);
  if (unknown === undefined) return;
  const list = unknown.map((k) => (Object.hasOwn(REPEAT_KEY_HINTS, k) ? `"${k}" (${REPEAT_KEY_HINTS[k]})` : `"${k}"`)).join(', ');
  const problem = `spec: unknown key${unknown.length > 1 ? 's' : ''} ${list}; an object spec takes only every and offset (each ms or a duration such as '10s')`;
  throw new InvalidScheduleError(schedule, unknown.join(', '), problem);
}

/** The problem of a spec that is neither of the two forms. */
const SPEC_FORM_PROBLEM = 'spec: expected a cron expression (a string such as "0 3 * * *") or an object { every, offset? }';

/** The spec of a schedule definition, parsed (throws InvalidScheduleError, see {@link checkSpecKeys}). */
export function specOf(def: Pick<ScheduleDefinition, 'name' | 'spec' | 'timeZone'>, defaultTimeZone: string): ScheduleSpec {
  const timeZone = def.timeZone ?? defaultTimeZone;
  const given: unknown = def.spec;
  // absent, null, an array or an object with no own key ({}, a Date) is neither form: said so, with
  // the value (an array's `every` is Array.prototype.every, whose source the message quoted)
  if (
    given == null ||
    (typeof given === 'object' && (Array.isArray(given) || (!Object.hasOwn(given, 'every') && Object.keys(given).length === 0)))
  ) {
    throw new InvalidScheduleError(def.name, show(given), SPEC_FORM_PROBLEM);
  }
  if (typeof def.spec === 'object' && def.spec !== null) {
    checkSpecKeys(def.spec, def.name);
    // the zone is checked as for "@every" (a typo is an error whatever the spec's form: trial 29), then ignored
    return everySpec(def.spec.every, { schedule: def.name, timeZone, offsetMs: offsetMsOf(def.spec.offset, def.name) });
  }
  return parseSpec(def.spec, { schedule: def.name, timeZone });
}

/**
 * The `offset` of an object spec in ms: a duration string (`'2s'`) read as `every`'s is
 * ({@link parseDurationMs}); a number (or anything else, refused by the every-spec's check) as given.
 * @throws InvalidScheduleError naming the text when it is no duration
 */
function offsetMsOf(offset: unknown, schedule: string | undefined): number | undefined {
  if (typeof offset !== 'string') return offset as number | undefined;
  try {
    return parseDurationMs(offset, schedule);
  } catch (err) {
    if (!(err instanceof InvalidScheduleError)) throw err;
    throw new InvalidScheduleError(schedule, offset, `offset: ${err.problem}`, { cause: err });
  }
}

/** The spec of a stored definition, limited to its `[startAt, endAt)` when it has either. */
export function storedSpec(s: StoredSchedule): ScheduleSpec {
  const spec = parseSpec(s.expression, { schedule: s.name, timeZone: s.timeZone, offsetMs: s.offsetMs || undefined, stored: true });
  return boundedSpec(spec, s.startAt, s.endAt);
}

/**
 * Lifetime of a fired trigger's dedup key, ms: it must outlive any handover and any catch-up —
 * at least 1 h, two periods, and the catch-up window; at most {@link KEY_TTL_MAX_MS} (what Redis takes).
 */
export function fireDedupTtlMs(stored: StoredSchedule, spec: ScheduleSpec): number {
  // at most what Redis takes as a PX (a catchUpWindow stored before it was bounded, or two periods of a huge every-spec)
  return Math.min(KEY_TTL_MAX_MS, Math.max(DEFAULTS.fireDedupMinTtlMs, 2 * spec.minPeriodMs, stored.catchUpWindowMs + 60_000));
}

/**
 * How long before its instant a trigger is enqueued, ms: up to {@link FIRE_LEAD} `maxMs` (5 s), and
 * at most half the period, so workers start the task at the instant (fire lag then does not include
 * the leader's round trips) and many triggers due at one instant are all enqueued by then. A
 * trigger more than `holdMs` (1 s) ahead waits in the scheduled set, where a change of its schedule
 * retracts it (fire-triggers.ts, fence-schedules.lua). 0 for every overlap policy but `allow`:
 * whether the previous task still runs (and is skipped, waited for or superseded) is decided at the
 * instant, not ahead of it.
 */
export function fireLeadMs(stored: StoredSchedule, spec: ScheduleSpec): number {
  return stored.overlap !== 'allow' ? 0 : Math.min(FIRE_LEAD.maxMs, Math.floor(spec.minPeriodMs / 2));
}

/** How fire.lua takes a trigger of a schedule with this overlap policy (protocol.ts FIRE_MODE). */
export function fireModeOf(overlap: OverlapPolicy): EnqueueFireMode {
  switch (overlap) {
    case 'skip':
      return FIRE_MODE.skipOverlap;
    case 'buffer-one':
      return FIRE_MODE.bufferOne;
    case 'cancel-previous':
      return FIRE_MODE.cancelPrevious;
    default:
      return FIRE_MODE.allowOverlap;
  }
}

/** The dedup key of a trigger and the id of its task: `<schedule>:<trigger-unix>` (unix seconds). */
export function triggerKey(schedule: string, triggerAtMs: number): string {
  return `${schedule}:${Math.floor(triggerAtMs / 1000)}`;
}
