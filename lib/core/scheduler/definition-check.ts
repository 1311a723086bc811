// A schedule definition's checks and its registry form (toStored, checkDefinition, finishStored).
import { hash } from 'node:crypto';
import { DEFAULTS } from '../runtime/defaults.js';
import { InvalidScheduleError } from '../runtime/errors.js';
import { describeProblem, OptionProblems, show } from '../runtime/options.js';
import { hasLoneSurrogate, isIdText, loneSurrogatePath, TASK_TYPE_MAX, TASK_TYPE_RULE } from '../runtime/unicode.js';
import { encodePayload } from '../queue/payload-codec.js';
import { isGroupName, isStoredName, isValidName } from '../redis/keys.js';
import { OVERLAP_POLICIES, REPEAT_KEY_HINTS, specOf, type ScheduleDefinition, type StoredSchedule } from './definition.js';
import { validateLabels } from './labels.js';
import { checkBounds } from './schedule-bounds.js';
import { canonicalExpression, type ScheduleSpec } from './spec.js';
import { boundedSpec } from './spec-bounded.js';
import { encodeStored } from './stored-form.js';

/**
 * The keys a schedule definition shares with the Nest decorators' options (all but `spec` and
 * `type`, which a decorator takes from its argument and its method): one list for both key checks.
 * @internal
 */
export const SHARED_SCHEDULE_KEYS = {
  name: true,
  timeZone: true,
  queue: true,
  payload: true,
  maxRetry: true,
  timeout: true,
  catchUp: true,
  catchUpWindow: true,
  catchUpCap: true,
  overlap: true,
  jitter: true,
  startAt: true,
  endAt: true,
  maxRuns: true,
  group: true,
  labels: true,
} as const satisfies Partial<Record<keyof ScheduleDefinition, true>>;

// every key of a definition, once: the compiler refuses a key ScheduleDefinition lacks and a missing one
const DEF_KEYS = new Set(Object.keys({ ...SHARED_SCHEDULE_KEYS, spec: true, type: true } satisfies Record<keyof ScheduleDefinition, true>));

/**
 * The name of a schedule, checked (`NAME_RULE` in lib/core/runtime/options.ts).
 * @throws InvalidScheduleError naming the value otherwise.
 */
export function validateScheduleName(name: unknown): string {
  if (isValidName(name)) return name;
  const p = new OptionProblems();
  p.name('name', name, true);
  throwFirst(p, undefined);
  return name as string;
}

/**
 * The name of a schedule an act or a read names (pause, resume, remove, trigger, backfill, history):
 * a name the registry can hold, the rule of {@link validateScheduleName} or `.` / `..`, which an
 * earlier version accepted (so such a schedule can still be read and removed, as a queue of that
 * name still can). A name no schedule can have is an error, not "not found".
 * @throws InvalidScheduleError naming the value otherwise (the error addSchedule gives for it).
 */
export function checkStoredScheduleName(name: unknown): string {
  return isStoredName(name) ? name : validateScheduleName(name);
}

/** The problem of a definition's text with a lone surrogate (runtime/unicode.ts), naming where. */
const LONE_SURROGATE_PROBLEM = (where: string) =>
  `${where}: expected well-formed Unicode text (it holds a lone UTF-16 surrogate, which the registry in Redis cannot decode)`;

/**
 * What to use instead of an unknown key of a definition: BullMQ's repeat options (`tz`, `limit`,
 * `startDate`…, the hints an object spec and `@Cron` give) and the repeat's own keys, which a migrant
 * puts beside `spec` (or flattens into the definition). REPEAT_KEY_HINTS is read at call time:
 * definition.ts and this module import each other.
 */
const DEF_KEY_HINTS: Readonly<Record<string, string>> = {
  every: 'give it in the spec: spec: { every, offset } or "@every 10s"',
  offset: 'give it in the spec: spec: { every, offset }',
  repeat:
    'give its pattern or every as the spec (spec: "0 3 * * *" or { every: 60_000 }) and its other options beside it (timeZone, maxRuns, startAt, endAt)',
};

/** What to use instead of `key`, when a hint names it. */
function defKeyHint(key: string): string | undefined {
  if (Object.hasOwn(DEF_KEY_HINTS, key)) return DEF_KEY_HINTS[key];
  return Object.hasOwn(REPEAT_KEY_HINTS, key) ? REPEAT_KEY_HINTS[key] : undefined;
}

/** The own keys of `def` that are not a definition's, in order; undefined when there are none (no array is made then). */
function unknownKeys(def: object): string[] | undefined {
  let unknown: string[] | undefined;
  for (const k in def) if (Object.hasOwn(def, k) && !DEF_KEYS.has(k)) (unknown ??= []).push(k);
  return unknown;
}

/** The text fields of a definition that must be well-formed Unicode. */
const TEXT_KEYS = ['spec', 'timeZone', 'queue', 'type', 'group'] as const;

/** Throws when a string of the definition (its texts, labels or payload) holds a lone surrogate. */
function checkUnicode(name: string, def: ScheduleDefinition): void {
  for (const key of TEXT_KEYS) {
    const v = def[key];
    if (typeof v === 'string' && hasLoneSurrogate(v)) throw new InvalidScheduleError(name, show(v), LONE_SURROGATE_PROBLEM(key));
  }
  for (const key of ['labels', 'payload'] as const) {
    const at = loneSurrogatePath(def[key], key);
    if (at !== undefined) throw new InvalidScheduleError(name, key, LONE_SURROGATE_PROBLEM(at));
  }
}

/** Throws the first problem of a definition as an InvalidScheduleError (the value, then `<key>: expected …`). */
function throwFirst(p: OptionProblems, schedule: string | undefined): void {
  const first = p.list[0];
  if (!first) return;
  const v = first.value;
  throw new InvalidScheduleError(schedule, v, describeProblem(first, false));
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
 * @param maxPayloadBytes the most UTF-8 bytes of the payload's JSON (`maxPayloadBytes`, as an
 *   enqueue's: each trigger copies the payload into a task); 0 = no limit
 * @throws InvalidScheduleError naming the schedule, the value and the problem (at registration, never at fire time).
 */
export function toStored(
  def: ScheduleDefinition,
  defaultTimeZone: string,
  runtime: boolean,
  maxPayloadBytes = 0,
): {
  /** The registry form. */
  stored: StoredSchedule;
  /** Its spec, parsed. */
  spec: ScheduleSpec;
  /** Its JSON in the full stored form (stored-form.ts encodeStored): what the registry scripts are sent. */
  json: string;
} {
  return finishStored(checkDefinition(def, defaultTimeZone, runtime, maxPayloadBytes));
}

/**
 * Validates a definition (every check of {@link toStored}; the bulk API checks all of a call's
 * before it fingerprints any, chunk by chunk while earlier chunks are written).
 * @param maxPayloadBytes the most UTF-8 bytes of the payload's JSON; 0 = no limit
 * @throws InvalidScheduleError naming the schedule, the value and the problem (a payload over
 *   `maxPayloadBytes`: its size and the limit).
 */
export function checkDefinition(
  def: ScheduleDefinition,
  defaultTimeZone: string,
  runtime: boolean,
  maxPayloadBytes = 0,
): CheckedDefinition {
  if (typeof def !== 'object' || def === null || Array.isArray(def)) {
    throw new InvalidScheduleError(undefined, def, 'expected a schedule definition object { name, spec, … }', {
      got: true,
    });
  }
  const name = validateScheduleName(def.name);
  const unknown = unknownKeys(def);
  if (unknown !== undefined) {
    const list = unknown
      .map((k) => {
        const hint = defKeyHint(k);
        return hint === undefined ? `"${k}"` : `"${k}" (${hint})`;
      })
      .join(', ');
    throw new InvalidScheduleError(name, unknown.join(', '), `unknown option${unknown.length > 1 ? 's' : ''} ${list}`);
  }
  checkUnicode(name, def);
  const p = new OptionProblems();
  const unbounded = specOf(def, defaultTimeZone);
  const bounds = checkBounds(def, unbounded, p);
  const spec = boundedSpec(unbounded, bounds.startAt, bounds.endAt);
  p.name('queue', def.queue);
  // the type rule of an enqueue and a handler: a longer type was stored, and no handler could take its tasks
  if (def.type !== undefined && !isIdText(def.type, TASK_TYPE_MAX)) p.expected('type', TASK_TYPE_RULE, def.type);
  p.int('maxRetry', def.maxRetry, 0);
  p.int('timeout', def.timeout, 0, 'ms');
  p.oneOf('catchUp', def.catchUp, ['all', 'latest', 'none']);
  p.ttlMs('catchUpWindow', def.catchUpWindow, 0); // its fired triggers' dedup keys live longer (fireDedupTtlMs)
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
    payload = encodePayload(type, def.payload === undefined ? null : def.payload, maxPayloadBytes);
  } catch (err) {
    throw new InvalidScheduleError(name, 'payload', (err as Error).message, { cause: err });
  }
  const body: CheckedBody = {
    name,
    expression: typeof def.spec === 'object' ? `@every ${spec.everyMs! / 1000}s` : canonicalExpression(def.spec),
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

/** A checked definition's body with its fingerprints (and labels) set: its registry form without the registry state. */
type Fingerprinted = CheckedBody & Pick<StoredSchedule, 'fp' | 'tfp' | 'labels'>;

/** The first 16 hex digits of the SHA-1 of `text`. */
function fingerprintOf(text: string): string {
  return hash('sha1', text, 'hex').slice(0, 16);
}

/**
 * Sets the labels and fingerprints on `c.body` (the fingerprints of the full form's text: see
 * {@link finishStored}); returns that text without its closing brace and fingerprints.
 */
function setFingerprints(c: CheckedDefinition): string {
  const { body, labels } = c;
  const text = JSON.stringify(body);
  const stored = body as Fingerprinted;
  // without labels `labels` is left out of the text: the fingerprint of an unlabelled schedule is as before labels existed
  if (labels === undefined) {
    stored.fp = fingerprintOf(text);
    return text.slice(0, -1);
  }
  stored.labels = labels;
  // JSON.stringify({ ...body, labels }) without a second walk of the body: labels are its last key
  const full = `${text.slice(0, -1)},"labels":${JSON.stringify(labels)}`;
  stored.fp = fingerprintOf(full + '}');
  stored.tfp = fingerprintOf(text); // the fingerprint without the labels: a label-only change keeps the generation
  return full;
}

/**
 * The registry form of a checked definition with its fingerprints (`fp`, and `tfp` with labels), as
 * {@link finishStored} makes them, without its JSON (the bulk upsert compares the fingerprints with
 * the stored ones before it makes any). `c.body` itself, computed at the first call. Throws nothing.
 */
export function fingerprintStored(c: CheckedDefinition): StoredSchedule {
  const stored = c.body as Fingerprinted;
  if (stored.fp === undefined) setFingerprints(c);
  return stored;
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
  const stored = body as Fingerprinted;
  // fingerprinted before (fingerprintStored): the full form is JSON.stringify(stored), its keys in the order they were set
  if (stored.fp !== undefined) return { stored, spec, json: encodeStored(stored, compact) };
  const full = setFingerprints(c);
  // the full form is JSON.stringify(stored): the body's keys, then labels, fp and tfp, in the order they were set
  const json = compact ? encodeStored(stored, true) : `${full},"fp":"${stored.fp}"${labels === undefined ? '' : `,"tfp":"${stored.tfp}"`}}`;
  return { stored, spec, json };
}
