// An enqueue's options, its result, and their checking: what a QueueClient prepares before it writes
// a task (client.ts writes it, enqueue-write.ts holds the write paths).
import { newTaskId } from './task-id.js';
import { DEFAULTS } from '../runtime/defaults.js';
import { InvalidOptionsError } from '../runtime/errors.js';
import { nearEpochProblem, OptionProblems, show } from '../runtime/options.js';
import { isGroupName, type QueueKeys } from '../redis/keys.js';
import type { DedupMode } from '../redis/commands/queue.js';
import { encodePayload } from './payload-codec.js';
import type { Prepared } from './enqueue-write.js';
import { engineTime } from '../runtime/time.js';
import { BULK_TASK_KEY_HINTS, DEDUP_KEY_HINTS, ENQUEUE_KEY_HINTS } from '../runtime/migrant-hints.js';
import { INSTANT_LIMIT_MS } from '../scheduler/spec-bounded.js';
import { isIdText, TASK_TYPE_MAX, TASK_TYPE_RULE } from '../runtime/unicode.js';

/**
 * Options of one enqueue. Durations are milliseconds, instants epoch milliseconds.
 * @publicApi
 */
export interface EnqueueOptions {
  /** Queue name. @defaultValue 'default' */
  queue?: string;
  /** Run no earlier than this many ms from now, measured by Redis server time; the due instant must be a valid Date. Exclusive with `processAt`. */
  delay?: number;
  /**
   * Run no earlier than this instant (epoch ms or a Date; |ms| < 8.64e15, a valid Date; one in the past
   * runs at once). Exclusive with `delay`. An instant before 1973-03-03 is refused (epoch seconds given as ms).
   */
  processAt?: number | Date;
  /** Retries after a failure before the task is dead (an integer from 0 to 2^53 − 1). @defaultValue 25 */
  maxRetry?: number;
  /** Timeout of one attempt, ms (an integer from 0 to 2^53 − 1); the handler's signal aborts when it elapses. 0 = none. @defaultValue 1800000 (30 min) */
  timeout?: number;
  /**
   * Explicit task id (1 to 200 characters, no lone UTF-16 surrogate). While a task with this id is
   * live (pending, scheduled, retrying or running) in the queue, another enqueue with it returns that
   * task with `deduplicated: true`. A done or dead task frees the id.
   */
  taskId?: string;
  /**
   * Dedup key: a second enqueue with the same key in the same queue within `dedupTtl` returns the
   * first task's id with `deduplicated: true`, whatever that task's state. The same as
   * `dedup: { key, ttl }` (mode `first`); exclusive with `dedup`.
   */
  dedupKey?: string;
  /** Lifetime of the dedup key, ms (an integer from 1 to 2^53 − 1). @defaultValue 3600000 (1 h) */
  dedupTtl?: number;
  /**
   * A keyed enqueue (exclusive with `dedupKey`/`dedupTtl`): `key` (1 to 400 characters, no lone
   * UTF-16 surrogate) names the task within the queue for `ttl` ms (default 3600000, 1 h), and `mode`
   * says what a second enqueue with the key does:
   * - `first` (default): nothing; it returns the first task's id with `deduplicated: true`;
   * - `debounce` (needs `delay`): while the key's task still waits for its time, it is replaced by
   *   this one (type, payload, options; its id stays) and starts `delay` ms after this enqueue
   *   (`deduplicated: true, replaced: true`); once it is due or has run, a new task is enqueued;
   * - `replace` (needs `delay` or `processAt`): the same, but the start time stays as it was (the
   *   newest payload wins).
   * The key of `debounce` and `replace` lives `ttl` ms, and at least until its task is due. Not
   * with `taskId`.
   */
  dedup?: DedupOptions;
  /**
   * The task's group (e.g. a tenant id; 1 to 200 characters, no control characters or lone UTF-16
   * surrogates). The tasks of a queue's groups are served round-robin between the groups (a group with
   * 10 tasks behind another with 100,000 gets its turn within a few tasks), under the queue's per-group limits
   * (`setQueueLimits`: `groupConcurrency`, `groupRate`). Ungrouped tasks of the same queue go first.
   * The handler sees it as `task.group`.
   */
  group?: string;
  /**
   * `false`: no PRODUCER span and no traceparent for this task (its attempts start new traces).
   * Only matters with `@opentelemetry/api` and an SDK installed. @defaultValue true
   */
  trace?: boolean;
}

/** A keyed enqueue (enqueue option `dedup`). @publicApi */
export interface DedupOptions {
  /** The key (1 to 400 characters, no lone UTF-16 surrogate), within the queue. */
  key: string;
  /** What a second enqueue with the key does. @defaultValue 'first' */
  mode?: DedupMode;
  /** Lifetime of the key, ms, an integer from 1 to 2^53 − 1 (debounce/replace: at least until its task is due). @defaultValue 3600000 (1 h) */
  ttl?: number;
}

/** What an enqueue did. `deduplicated: true` means no new task was made and `id` is the existing task's. */
export interface EnqueueResult {
  /** The task's id: the `taskId` option, else a generated one (22 random base64url characters); the existing task's id when deduplicated. */
  id: string;
  /** The queue the task is in. */
  queue: string;
  /** True when a live task with the same `taskId`, or the same dedup key within its TTL, existed: no new task was made. */
  deduplicated: boolean;
  /** True when the dedup key's task (mode `debounce` or `replace`) was still waiting and this enqueue replaced it. */
  replaced?: boolean;
  /**
   * Where the task is now: in the stream (`pending`) or waiting for its time (`scheduled`). When
   * deduplicated, where the existing task is: `scheduled`, `retry` (waiting for its next attempt),
   * `dead` (a dedup key outlives its task), else `pending`: in the stream, ready or running (telling
   * those apart takes a scan of the stream), or done when a dedup key outlived it.
   */
  state: 'pending' | 'scheduled' | 'retry' | 'dead';
}

/** One task of {@link QueueClient.enqueueBulk}. */
export interface BulkTask {
  /** The task's type, which selects its handler. */
  type: string;
  /** The payload (JSON-serialisable). @defaultValue null */
  payload?: unknown;
  /** Options of this task's enqueue, over the client's `defaults`. */
  options?: EnqueueOptions;
}

const BULK_TASK_KEYS: ReadonlySet<string> = new Set(['type', 'payload', 'options']);

/**
 * Checks the shape of `enqueueBulk`'s input: an array of objects of `type`, `payload` and `options`
 * only, so an option written beside them (`{ type, payload, delay }`) or BullMQ's `{ name, data, opts }`
 * is refused, not ignored.
 * @throws InvalidOptionsError naming the bad item's index and its offending keys or value.
 */
export function checkBulkTasks(tasks: unknown): void {
  if (!Array.isArray(tasks))
    throw new InvalidOptionsError([`expected an array of { type, payload?, options? }, got ${show(tasks)}`], 'enqueueBulk input');
  for (let i = 0; i < tasks.length; i++) {
    const task: unknown = tasks[i];
    const what = `enqueueBulk task #${i}`;
    if (typeof task !== 'object' || task === null || Array.isArray(task))
      throw new InvalidOptionsError([`expected { type, payload?, options? }, got ${show(task)}`], what);
    // the common case allocates nothing beyond the key list: the problems are gathered only for a bad task
    if (Object.keys(task).every((k) => BULK_TASK_KEYS.has(k))) continue;
    const p = new OptionProblems();
    p.unknownKeys(task, BULK_TASK_KEYS, '', BULK_TASK_KEY_HINTS);
    p.add('', 'a task takes only type, payload and options (enqueue options go in options)');
    p.throwIfAny(what);
  }
}

const ENQUEUE_KEYS = new Set([
  'queue',
  'delay',
  'processAt',
  'maxRetry',
  'timeout',
  'taskId',
  'dedupKey',
  'dedupTtl',
  'dedup',
  'trace',
  'group',
]);
const DEDUP_KEYS = new Set(['key', 'mode', 'ttl']);
const DEDUP_MODES: readonly DedupMode[] = ['first', 'debounce', 'replace'];

/** The options of an enqueue that gives none (shared: never written to). */
export const NO_OPTIONS: EnqueueOptions = Object.freeze({});

/** What {@link prepareTask} needs of its client: the defaults of an enqueue, the payload limit, the keys of a queue. */
export interface EnqueueContext {
  readonly defaults: { readonly queue: string; readonly maxRetry: number; readonly timeoutMs: number };
  /** Largest payload accepted, UTF-8 bytes of its JSON; 0 = no limit. */
  readonly maxPayloadBytes: number;
  keysOf(queue: string): QueueKeys;
}

/**
 * Checks an enqueue's type and options and prepares the task for its write: with no options, the
 * client's defaults and nothing to check but the type and the payload; else every option checked and
 * every problem named in one `InvalidOptionsError`. The payload is encoded here (`InvalidPayloadError`,
 * `PayloadTooLargeError` from payload-codec.ts).
 */
export function prepareTask(c: EnqueueContext, type: string, payload: unknown, options: EnqueueOptions): Prepared {
  if (isIdText(type, TASK_TYPE_MAX) && (options === NO_OPTIONS || isEmptyObject(options))) {
    // no options: the defaults, nothing to check but the type (checked) and the payload
    const { queue, maxRetry, timeoutMs } = c.defaults;
    return {
      keys: c.keysOf(queue),
      id: newTaskId(),
      type,
      payload: encodePayload(type, payload === undefined ? null : payload, c.maxPayloadBytes),
      maxRetry,
      timeoutMs,
      enqueuedAt: engineTime.now(),
      processAt: 0,
      delayMs: 0,
      dedupTtlMs: DEFAULTS.dedupTtlMs,
      unique: false,
    };
  }
  return prepareWith(c, type, payload, options);
}

/** prepareTask() for an enqueue with options: every option checked, every problem named. */
function prepareWith(c: EnqueueContext, type: string, payload: unknown, options: EnqueueOptions): Prepared {
  const p = new OptionProblems();
  if (!isIdText(type, TASK_TYPE_MAX)) p.expected('type', TASK_TYPE_RULE, type);
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidOptionsError([`expected an object, got ${show(options)}`], 'enqueue options');
  p.unknownKeys(options, ENQUEUE_KEYS, '', ENQUEUE_KEY_HINTS);
  p.name('queue', options.queue);
  p.int('maxRetry', options.maxRetry, 0);
  p.int('timeout', options.timeout, 0, 'ms');
  const queue = options.queue ?? c.defaults.queue;
  const maxRetry = options.maxRetry ?? c.defaults.maxRetry;
  const timeout = options.timeout ?? c.defaults.timeoutMs;
  let processAt = 0;
  let delayMs = 0;
  if (options.delay !== undefined && options.processAt !== undefined) p.add('', 'delay and processAt are mutually exclusive');
  // the due instant must be one a Date can hold (±8.64e15 ms, ECMA-262 §21.4.1.1), as a schedule's startAt/endAt:
  // past it the Inspector and the CLI could not show it (they showed "NaN-NaN-NaN")
  if (options.delay !== undefined) {
    if (typeof options.delay !== 'number' || !Number.isFinite(options.delay) || options.delay < 0) {
      p.expected('delay', 'a finite number >= 0 (ms)', options.delay);
    } else if (engineTime.now() + options.delay >= INSTANT_LIMIT_MS) {
      p.expected('delay', 'a delay whose due instant is a valid Date (before the year 275760)', options.delay);
    } else delayMs = Math.ceil(options.delay);
  }
  if (options.processAt !== undefined) {
    const at = options.processAt instanceof Date ? options.processAt.getTime() : options.processAt;
    if (typeof at !== 'number' || !Number.isFinite(at) || Math.abs(at) >= INSTANT_LIMIT_MS) {
      p.expected(
        'processAt',
        'epoch ms of a valid Date, or a valid Date',
        options.processAt instanceof Date ? String(options.processAt) : options.processAt,
      );
    } else {
      const near = nearEpochProblem(at, options.processAt);
      if (near !== undefined) p.add('processAt', near, options.processAt);
      else if (at > engineTime.now()) processAt = Math.ceil(at);
    }
  }
  const id = options.taskId ?? newTaskId();
  if (options.taskId !== undefined && !isIdText(options.taskId, 200)) {
    p.expected('taskId', 'a non-empty string of at most 200 characters without lone surrogates', options.taskId);
  }
  if (options.dedupKey !== undefined && !isIdText(options.dedupKey, 400)) {
    p.expected('dedupKey', 'a non-empty string of at most 400 characters without lone surrogates', options.dedupKey);
  }
  p.bool('trace', options.trace);
  if (options.group !== undefined && !isGroupName(options.group))
    p.expected('group', 'a string of 1 to 200 characters without control characters or lone surrogates', options.group);
  let dedupTtlMs = options.dedupTtl ?? DEFAULTS.dedupTtlMs;
  if (options.dedupTtl !== undefined && options.dedupKey === undefined) p.add('dedupTtl', 'given without dedupKey');
  p.ttlMs('dedupTtl', options.dedupTtl, 1);
  let dedupKey = options.dedupKey;
  let dedupMode: DedupMode | undefined;
  const d = options.dedup;
  if (d !== undefined) {
    if (options.dedupKey !== undefined || options.dedupTtl !== undefined) p.add('dedup', 'exclusive with dedupKey and dedupTtl');
    if (typeof d !== 'object' || d === null) p.expected('dedup', '{ key, mode?, ttl? }', d);
    else {
      p.unknownKeys(d, DEDUP_KEYS, 'dedup', DEDUP_KEY_HINTS);
      if (!isIdText(d.key, 400)) p.expected('dedup.key', 'a non-empty string of at most 400 characters without lone surrogates', d.key);
      if (d.mode !== undefined && !DEDUP_MODES.includes(d.mode)) p.expected('dedup.mode', `one of ${DEDUP_MODES.join(', ')}`, d.mode);
      p.ttlMs('dedup.ttl', d.ttl, 1);
      if (d.mode === 'debounce' && !(delayMs > 0)) p.add('dedup.mode', 'debounce needs a delay (its window, ms)');
      // a task due at once never waits, so there is nothing to replace: every enqueue would be a new task (trial 10)
      if (d.mode === 'replace' && !(delayMs > 0) && !(processAt > 0))
        p.add('dedup.mode', 'replace needs a delay or processAt (the time its task waits for, while it can be replaced)');
      if ((d.mode === 'debounce' || d.mode === 'replace') && options.taskId !== undefined)
        p.add('dedup.mode', `${d.mode} is not given with taskId (the key's task keeps its id)`);
      dedupKey = d.key;
      dedupTtlMs = d.ttl ?? DEFAULTS.dedupTtlMs;
      if (d.mode !== undefined && d.mode !== 'first') dedupMode = d.mode;
    }
  }
  p.throwIfAny(`enqueue options of task type ${JSON.stringify(type)}`);
  const encoded = encodePayload(type, payload === undefined ? null : payload, c.maxPayloadBytes);
  const unique = options.taskId !== undefined;
  return {
    keys: c.keysOf(queue),
    id,
    type,
    payload: encoded,
    maxRetry,
    timeoutMs: timeout,
    enqueuedAt: engineTime.now(),
    processAt,
    delayMs,
    dedupKey,
    dedupTtlMs,
    dedupMode,
    unique,
    group: options.group,
  };
}

/** An object with no enumerable key (what an enqueue without options passes). */
function isEmptyObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false; // [] is no options object: prepareWith refuses it
  for (const _ in v) return false;
  return true;
}
