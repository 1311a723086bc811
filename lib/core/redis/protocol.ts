/**
 * The wire protocol of Chronos: every name and code that Redis stores or a script replies with, so that
 * TypeScript and Lua agree on them in one place. Values here are stored in Redis by running
 * versions: renaming a readable name is free, changing a wire letter or a code breaks compatibility.
 * The Lua scripts cannot import this module; their headers refer to it by name ("codes: see
 * protocol.ts FIRE_RESULT"), and test/unit/scripts-and-keys.spec.ts checks that they agree.
 */

// The Lua scripts name every table as protocol.ts NAME: those kept in the two modules below stay exported here.
export * from './protocol-scripts.js';
export * from './protocol-storage.js';

/**
 * The fields of a task's meta (JSON object in the `meta` field of a stream entry and in the stored
 * form), readable name → wire letter. Read meta as `meta[META.retried]`: a property read, no copy.
 */
export const META = {
  /** Failed attempts so far (a crash is not a failure, see `crashes`). Integer; absent = 0 (not written at 0). */
  retried: 'r',
  /** Retries allowed before the task is dead. Integer. */
  maxRetry: 'm',
  /** Timeout of one attempt, ms; 0 = none. Absent = 0 (not written at 0). */
  timeoutMs: 't',
  /** When the task was enqueued, epoch ms (the enqueuer's clock). */
  enqueuedAt: 'e',
  /** Name of the schedule whose trigger enqueued the task (absent for other tasks). */
  schedule: 's',
  /** Instant of that trigger, epoch ms (absent for other tasks). */
  triggerAt: 'tr',
  /** `1` when the task was enqueued with an explicit id: its uid key is released when it ends. */
  uniqueId: 'u',
  /**
   * `1` when the task holds its schedule's overlap marker (overlap policy `skip`, `buffer-one` or
   * `cancel-previous`): its overlap key is released when it ends.
   */
  overlapSkip: 'o',
  /** Times the task was reclaimed from a dead or stuck consumer (recover.lua counts them). Integer. */
  crashes: 'c',
  /** Last error message, with its stack when known (at most ~4000 characters). */
  lastError: 'le',
  /** When the task last failed, epoch ms. */
  failedAt: 'fa',
  /** Why the task is dead, one of {@link DEAD_REASON} (absent while it is not dead). */
  deadReason: 'rs',
  /** W3C `traceparent` of the span that created the task (the enqueue's or the fire's), when tracing is on. */
  traceparent: 'tp',
  /** The raw fields of a stream entry that could not be decoded (field → value). */
  raw: 'raw',
  /**
   * The `catchUpWindow` of the schedule whose trigger enqueued the task, ms: a first attempt that
   * would start more than this after `triggerAt` is stale and skipped (trigger tasks only).
   */
  catchUpWindowMs: 'cw',
  /**
   * With catch-up `latest` or `none`: the instant of the schedule's next trigger after this one,
   * epoch ms. Once it has come, a newer trigger supersedes the task: a first attempt starting then
   * is skipped (trigger tasks only).
   */
  supersededAt: 'nx',
  /**
   * With {@link META.overlapSkip}: which policy beyond `skip` the trigger was fired under, one of
   * {@link OVERLAP_MODE} (absent = `skip`). `cancel-previous`: a newer trigger of the schedule
   * supersedes the task (recovery/stale.ts, worker/supersede.ts); `buffer-one`: informative.
   */
  overlapMode: 'om',
  /**
   * The task's group (enqueue option `group`): the tasks of a queue's groups are served
   * round-robin, under the queue's per-group limits (fetch-limited.lua). Absent for ungrouped tasks.
   */
  group: 'g',
  /**
   * The task's dedup key (enqueue option `dedupKey` / `dedup.key`; absent without one): an operator's
   * delete of the task releases the key when it still names the task (admin/task-acts.ts).
   */
  dedupKey: 'dk',
} as const;

/** The overlap policies beyond `skip` (meta field {@link META.overlapMode}); wire letters, as FIRE_MODE's. */
export const OVERLAP_MODE = {
  /** `buffer-one`: one trigger waits behind the task (in the schedule's buffer key) and starts when it ends. */
  bufferOne: 'b',
  /** `cancel-previous`: the next trigger's task supersedes this one (its signal is aborted). */
  cancelPrevious: 'c',
} as const;

export type OverlapMode = (typeof OVERLAP_MODE)[keyof typeof OVERLAP_MODE];

/** Why a task is dead (meta field {@link META.deadReason}, and the `reason` of `task.dead` events). */
export const DEAD_REASON = {
  /** Its retry budget (`maxRetry`) is spent. */
  retries: 'retries',
  /** Its handler threw a `NonRetryableError`. */
  nonRetryable: 'non-retryable',
  /** Its last attempt timed out with no retry left. */
  timeout: 'timeout',
  /** It was delivered more than `maxDeliveries` times without finishing (recover.lua). */
  poison: 'poison',
  /** Its stream entry could not be decoded. */
  decode: 'decode',
  /** No server of the fleet has a handler for its type. */
  noHandler: 'no-handler',
  /** An operator cancelled it while it ran (Inspector `cancelTask`; its handler's signal is aborted). */
  cancelled: 'cancelled',
} as const;

export type DeadReason = (typeof DEAD_REASON)[keyof typeof DEAD_REASON];

/**
 * The wire form of a task's meta. Keys are the wire letters of {@link META} (see there for meaning
 * and unit); write and read them through `META`.
 */
export interface TaskMeta {
  [META.retried]: number;
  [META.maxRetry]: number;
  [META.timeoutMs]: number;
  [META.enqueuedAt]: number;
  [META.schedule]?: string;
  [META.triggerAt]?: number;
  [META.uniqueId]?: 1;
  [META.overlapSkip]?: 1;
  [META.crashes]?: number;
  [META.lastError]?: string;
  [META.failedAt]?: number;
  [META.deadReason]?: DeadReason;
  [META.traceparent]?: string;
  [META.raw]?: Record<string, string>;
  [META.catchUpWindowMs]?: number;
  [META.supersededAt]?: number;
  [META.overlapMode]?: OverlapMode;
  [META.group]?: string;
  [META.dedupKey]?: string;
}

/** The meta of a new task: no attempt yet. `timeoutMs` in ms, `enqueuedAt` epoch ms. */
export function newMeta(maxRetry: number, timeoutMs: number, enqueuedAt: number): TaskMeta {
  return { r: 0, m: maxRetry, t: timeoutMs, e: enqueuedAt };
}

/**
 * The fields of a stream entry, in the order Chronos writes them (XADD). The stored form of a task
 * outside the stream (retry, dead) is the JSON array of their values in the same order; a scheduled
 * task's (enqueue.lua) is `"<meta>\n<payload>\n<type>"`, its id being its field in `<q>:tasks`.
 * Values: `id` task id, `type` task type, `payload` JSON text, `meta` JSON text of {@link TaskMeta}.
 */
export const ENTRY_FIELDS = ['id', 'type', 'payload', 'meta'] as const;

export type EntryField = (typeof ENTRY_FIELDS)[number];

/** The flat field/value list of a task's stream entry, for `XADD key * ...entryFields(…)`. `meta` is JSON text. */
export function entryFields(id: string, type: string, payload: string, meta: string): string[] {
  return [ENTRY_FIELDS[0], id, ENTRY_FIELDS[1], type, ENTRY_FIELDS[2], payload, ENTRY_FIELDS[3], meta];
}

/** True when a flat field/value list has exactly the layout {@link entryFields} writes (values not checked). */
export function isEntryLayout(flat: readonly string[]): boolean {
  // indexed, not destructured: this runs per fetched task, much of it before the JIT has optimised it
  const f = ENTRY_FIELDS;
  return flat.length === 8 && flat[0] === f[0] && flat[2] === f[1] && flat[4] === f[2] && flat[6] === f[3];
}
