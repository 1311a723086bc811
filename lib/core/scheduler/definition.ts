import { hash } from 'node:crypto';
import { DEFAULTS } from '../runtime/defaults.js';
import { InvalidScheduleError } from '../runtime/errors.js';
import { describeProblem, OptionProblems, show } from '../runtime/options.js';
import { hasLoneSurrogate, loneSurrogatePath } from '../runtime/unicode.js';
import { encodePayload } from '../queue/payload-codec.js';
import { isGroupName } from '../redis/keys.js';
import { FIRE_LEAD, FIRE_MODE, type FireMode } from '../redis/protocol.js';
import { validateLabels } from './labels.js';
import { checkBounds, type StoredBounds } from './schedule-bounds.js';
import { everySpec, parseSpec, type ScheduleSpec } from './spec.js';
import { boundedSpec } from './spec-bounded.js';
import { encodeStored } from './stored-form.js';

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
  /** Unique, stable across processes (it is part of every trigger's dedup key). ≤ 200 chars of [A-Za-z0-9_.:-]. */
  name: string;
  /**
   * When it fires: a 5-field cron expression (`'0 3 * * *'`), a descriptor (`'@daily'`),
   * `'@every 90s'`, or `{ every: ms | '10s', offset?: ms }` (epoch-aligned interval, ≥ 1 s, whole seconds).
   */
  spec:
    | string
    | {
        /** The period: ms (a number) or a duration string such as `'10s'` or `'1h30m'`; ≥ 1 s, whole seconds. */
        every: number | string;
        /** Shift of the triggers from the epoch-aligned grid, ms (whole seconds, less than the period). @defaultValue 0 */
        offset?: number;
      };
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
  /**
   * Missed triggers older than this are skipped (counted and logged), ms; so is a trigger's task that
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
  /** No trigger before this instant (inclusive): epoch ms or a Date. @defaultValue none */
  startAt?: number | Date;
  /** No trigger at or after this instant (exclusive): epoch ms or a Date, after `startAt`. The schedule stays registered (shown as ended). @defaultValue none */
  endAt?: number | Date;
  /**
   * The most triggers the schedule enqueues in total, fleet-wide (an integer ≥ 1), counted in Redis
   * when one is enqueued (not on a duplicate, skip, pause or fence). A new definition keeps the count
   * unless its maxRuns differs (then it starts afresh). An operator's trigger or backfill is not counted. @defaultValue none
   */
  maxRuns?: number;
  /**
   * The group of each trigger's task (enqueue option `group`: served round-robin with the queue's
   * other groups, under its per-group limits). 1 to 200 characters, no control characters.
   */
  group?: string;
  /**
   * Labels to find the schedule by (`Inspector.schedulePage({ labels })`, the CLI's
   * `schedule ls --label k=v`, the console), e.g. `{ tenant: 'acme', kind: 'digest' }`. At most 16
   * labels; a key is 1 to 64 characters of `[A-Za-z0-9_./-]`; a value is 0
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
  'jitter',
  'startAt',
  'endAt',
  'maxRuns',
  'group',
  'labels',
]);

/** The spec of a schedule definition, parsed (throws InvalidScheduleError). */
export function specOf(def: Pick<ScheduleDefinition, 'name' | 'spec' | 'timeZone'>, defaultTimeZone: string): ScheduleSpec {
  const timeZone = def.timeZone ?? defaultTimeZone;
  if (typeof def.spec === 'object' && def.spec !== null) {
    return everySpec(def.spec.every, { schedule: def.name, timeZone: 'UTC', offsetMs: def.spec.offset });
  }
  return parseSpec(def.spec, { schedule: def.name, timeZone });
}

/** The spec of a stored definition, limited to its `[startAt, endAt)` when it has either. */
export function storedSpec(s: StoredSchedule): ScheduleSpec {
  const spec = parseSpec(s.expression, { schedule: s.name, timeZone: s.timeZone, offsetMs: s.offsetMs || undefined });
  return boundedSpec(spec, s.startAt, s.endAt);
}

/**
 * The name of a schedule, checked (`NAME_RULE` in lib/core/runtime/options.ts).
 * @throws InvalidScheduleError naming the value otherwise.
 */
export function validateScheduleName(name: unknown): string {
  const p = new OptionProblems();
  p.name('name', name, true);
  throwFirst(p, undefined);
  return name as string;
}

/** The problem of a definition's text with a lone surrogate (runtime/unicode.ts), naming where. */
const LONE_SURROGATE_PROBLEM = (where: string) =>
  `${where}: expected well-formed Unicode text (it holds a lone UTF-16 surrogate, which the registry in Redis cannot decode)`;

/** Throws when a string of the definition (its texts, labels or payload) holds a lone surrogate. */
function checkUnicode(name: string, def: ScheduleDefinition): void {
  const texts: [string, unknown][] = [
    ['spec', def.spec],
    ['timeZone', def.timeZone],
    ['queue', def.queue],
    ['type', def.type],
    ['group', def.group],
  ];
  for (const [key, v] of texts) {
    if (typeof v === 'string' && hasLoneSurrogate(v)) throw new InvalidScheduleError(name, show(v), LONE_SURROGATE_PROBLEM(key));
  }
  for (const [key, v] of [
    ['labels', def.labels],
    ['payload', def.payload],
  ] as const) {
    const at = loneSurrogatePath(v, key);
    if (at !== undefined) throw new InvalidScheduleError(name, key, LONE_SURROGATE_PROBLEM(at));
  }
}

/** Throws the first problem of a definition as an InvalidScheduleError (the value, then `<key>: expected …`). */
function throwFirst(p: OptionProblems, schedule: string | undefined): void {
  const first = p.list[0];
  if (!first) return;
  const v = first.value;
  throw new InvalidScheduleError(schedule, typeof v === 'string' ? v : show(v), describeProblem(first, false));
}

/** The registry form of a schedule without its fingerprints: what {@link checkDefinition} builds. */
export type CheckedBody = Omit<
  StoredSchedule,
  'fp' | 'tfp' | 'labels' | 'paused' | 'registeredAt' | 'changedAt' | 'resumedAt' | 'generation'
>;

/** A definition validated ({@link checkDefinition}): its body, labels and spec; {@link finishStored} makes its registry form. */
export interface CheckedDefinition {
  body: CheckedBody;
  /** Its labels, sorted by key; undefined for none. */
  labels: Record<string, string> | undefined;
  spec: ScheduleSpec;
}

/**
 * Validates a definition and builds its registry form.
 * @throws InvalidScheduleError naming the schedule, the value and the problem (at registration, never at fire time).
 */
export function toStored(
  def: ScheduleDefinition,
  defaultTimeZone: string,
  runtime: boolean,
): {
  /** The registry form. */
  stored: StoredSchedule;
  /** Its spec, parsed. */
  spec: ScheduleSpec;
  /** Its JSON in the full stored form (stored-form.ts encodeStored): what the registry scripts are sent. */
  json: string;
} {
  return finishStored(checkDefinition(def, defaultTimeZone, runtime));
}

/**
 * Validates a definition (every check of {@link toStored}; the bulk API checks all of a call's
 * before it fingerprints any, chunk by chunk while earlier chunks are written).
 * @throws InvalidScheduleError naming the schedule, the value and the problem.
 */
export function checkDefinition(def: ScheduleDefinition, defaultTimeZone: string, runtime: boolean): CheckedDefinition {
  if (typeof def !== 'object' || def === null || Array.isArray(def)) {
    throw new InvalidScheduleError(undefined, show(def), 'expected a schedule definition: an object with a name and a spec');
  }
  const name = validateScheduleName(def.name);
  const unknown = Object.keys(def).filter((k) => !DEF_KEYS.has(k));
  if (unknown.length > 0) {
    const list = unknown.map((k) => `"${k}"`).join(', ');
    throw new InvalidScheduleError(name, unknown.join(', '), `unknown option${unknown.length > 1 ? 's' : ''} ${list}`);
  }
  checkUnicode(name, def);
  const p = new OptionProblems();
  const unbounded = specOf(def, defaultTimeZone);
  const bounds = checkBounds(def, unbounded, p);
  const spec = boundedSpec(unbounded, bounds.startAt, bounds.endAt);
  p.name('queue', def.queue);
  if (def.type !== undefined && (typeof def.type !== 'string' || def.type.length === 0)) p.expected('type', 'a non-empty string', def.type);
  p.int('maxRetry', def.maxRetry, 0);
  p.int('timeout', def.timeout, 0, 'ms');
  p.oneOf('catchUp', def.catchUp, ['all', 'latest', 'none']);
  p.int('catchUpWindow', def.catchUpWindow, 0, 'ms');
  p.int('catchUpCap', def.catchUpCap, 1);
  p.oneOf('overlap', def.overlap, OVERLAP_POLICIES);
  if (def.group !== undefined && !isGroupName(def.group))
    p.expected('group', 'a string of 1 to 200 characters without control characters', def.group);
  throwFirst(p, name);
  const labels = validateLabels(name, def.labels);
  const queue = def.queue ?? DEFAULTS.queue;
  const type = def.type ?? name;
  const maxRetry = def.maxRetry ?? DEFAULTS.maxRetry;
  const timeoutMs = def.timeout ?? DEFAULTS.timeoutMs;
  const catchUp = def.catchUp ?? DEFAULTS.catchUp;
  const catchUpWindowMs = def.catchUpWindow ?? DEFAULTS.catchUpWindowMs;
  const catchUpCap = def.catchUpCap ?? DEFAULTS.catchUpCap;
  const overlap = def.overlap ?? DEFAULTS.overlap;
  let payload: string;
  try {
    payload = encodePayload(type, def.payload === undefined ? null : def.payload);
  } catch (err) {
    throw new InvalidScheduleError(name, 'payload', (err as Error).message, { cause: err });
  }
  const body: CheckedBody = {
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
    group: def.group,
    ...bounds,
    runtime,
  };
  return { body, labels, spec };
}

/**
 * The registry form of a checked definition, its spec and the JSON sent to the registry scripts
 * (stored-form.ts encodeStored: the compact form when `compact`, else the full form). Throws nothing. The registry form is `c.body`
 * itself with its labels and fingerprints appended (no copy: a bulk call makes 100,000 of them).
 * The fingerprints are those of the full form's text, `JSON.stringify({ ...body, labels })` (`fp`)
 * and `JSON.stringify(body)` (`tfp`, with labels only), as every version before the compact form
 * computed them: an unchanged definition keeps its fingerprint.
 */
export function finishStored(c: CheckedDefinition, compact = false): { stored: StoredSchedule; spec: ScheduleSpec; json: string } {
  const { body, labels, spec } = c;
  const fingerprint = (text: string): string => hash('sha1', text, 'hex').slice(0, 16);
  const text = JSON.stringify(body);
  const stored = body as CheckedBody & Pick<StoredSchedule, 'fp' | 'tfp' | 'labels'>;
  // without labels `labels` is left out of the text: the fingerprint of an unlabelled schedule is as before labels existed
  if (labels === undefined) {
    stored.fp = fingerprint(text);
  } else {
    stored.labels = labels;
    // JSON.stringify({ ...body, labels }) without a second walk of the body: labels are its last key
    stored.fp = fingerprint(`${text.slice(0, -1)},"labels":${JSON.stringify(labels)}}`);
    stored.tfp = fingerprint(text); // the fingerprint without the labels: a label-only change keeps the generation
  }
  return { stored, spec, json: encodeStored(stored, compact) };
}

/**
 * Lifetime of a fired trigger's dedup key, ms: it must outlive any handover and any catch-up —
 * at least 1 h, two periods, and the catch-up window.
 */
export function fireDedupTtlMs(stored: StoredSchedule, spec: ScheduleSpec): number {
  return Math.max(DEFAULTS.fireDedupMinTtlMs, 2 * spec.minPeriodMs, stored.catchUpWindowMs + 60_000);
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
