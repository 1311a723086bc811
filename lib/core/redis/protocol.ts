/**
 * The wire protocol of Chronos: every name and code that Redis stores or a script replies with, so that
 * TypeScript and Lua agree on them in one place. Values here are stored in Redis by running
 * versions: renaming a readable name is free, changing a wire letter or a code breaks compatibility.
 * The Lua scripts cannot import this module; their headers refer to it by name ("codes: see
 * protocol.ts FIRE_RESULT"), and test/unit/scripts-and-keys.spec.ts checks that they agree.
 */

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

/** What fire.lua does with one trigger (its 8th value per trigger). */
export const FIRE_MODE = {
  /** Enqueue (overlap policy `allow`). */
  allowOverlap: 'a',
  /** Enqueue unless the schedule's previous task is still live (overlap policy `skip`). */
  skipOverlap: 's',
  /**
   * Overlap policy `buffer-one`: enqueue when the schedule has no live task; else keep the trigger
   * in the schedule's buffer key (it starts when that task ends: overlap.lua), unless one waits there already.
   */
  bufferOne: 'b',
  /** Overlap policy `cancel-previous`: enqueue, taking the overlap marker from the schedule's live task (superseded). */
  cancelPrevious: 'c',
  /** Only advance lastFired: a trigger skipped by the catch-up policy. */
  advanceOnly: 'x',
} as const;

export type FireMode = (typeof FIRE_MODE)[keyof typeof FIRE_MODE];

/**
 * How far ahead of its instant a trigger of a schedule with overlap `allow` is enqueued, ms
 * (definition.ts fireLeadMs; never more than half its period). Within `holdMs` of its instant the
 * task goes to the stream and the worker that fetches it holds it until the instant; further
 * ahead (up to `maxMs`, so a leader with many triggers due at one instant has them all enqueued
 * by then) it waits in the queue's scheduled set, due at the instant, where a change of the
 * schedule retracts it (fence-schedules.lua).
 */
export const FIRE_LEAD = { holdMs: 1000, maxMs: 5000 } as const;

/** fire.lua's code per trigger. */
export const FIRE_RESULT = {
  /** Fired before (its dedup key exists): nothing enqueued. */
  duplicate: 0,
  /** Enqueued now. */
  enqueued: 1,
  /** Not enqueued: the schedule's previous task is still live (overlap `skip`); lastFired advanced. */
  skipped: 2,
  /** Refused: more than `leadMs` before its instant by Redis time; nothing changed. */
  early: 3,
  /** At or before the schedule's lastFired: nothing changed. */
  stale: 4,
  /** Mode `advanceOnly`: lastFired advanced, nothing enqueued. */
  advanced: 5,
  /**
   * Refused: planned under an older generation of the schedule than the queue's slot holds (it was
   * paused, removed or changed since the leader loaded it); nothing changed. The leader reloads.
   */
  fenced: 6,
  /**
   * Refused: dated after the schedule's liveUntil (orphaned since then: no live instance declared
   * it; live-names.ts liveUntil); nothing changed. The leader reads liveness again.
   */
  orphaned: 7,
  /**
   * Mode `bufferOne`: the schedule's previous task is still live; the trigger waits in its buffer key
   * and its task starts when that one ends (lastFired advanced, dedup key set).
   */
  buffered: 8,
  /**
   * Mode `cancelPrevious`: enqueued, and the schedule's previous task was still live: it is
   * superseded (it no longer holds the overlap marker; the leader announces it on the cancel channel).
   */
  superseding: 9,
  /**
   * Not enqueued: the schedule has enqueued its `maxRuns` triggers (its runs counter, keys.ts
   * `runs`); lastFired advanced, no dedup key written.
   */
  exhausted: 10,
} as const;

/** enqueue.lua's code. */
export const ENQUEUE_RESULT = {
  /** A live task has the dedup key or the explicit id: nothing written, the reply carries that task's id. */
  deduplicated: 0,
  /** In the stream, ready. */
  enqueued: 1,
  /** In the scheduled set, waiting for its time. */
  scheduled: 2,
  /** A dedup key of mode debounce or replace named a task still waiting for its time: that task was replaced (its id is in the reply). */
  replaced: 3,
} as const;

/** declare-schedules.lua's first element. */
export const DECLARE_RESULT = {
  /** Neither the shared names set nor the instance's building set exists: fill it again and retry. */
  namesMissing: 0,
  declared: 1,
} as const;

/** heartbeat.lua's first element. */
export const HEARTBEAT_RESULT = {
  /** The instance's declaration or its names set is gone (Redis lost data): declare the schedules again. */
  declaredLost: 0,
  ok: 1,
} as const;

/** schedule-admin.lua's first element (then Redis time, the schedule's new generation, its previous queue). */
export const ADMIN_RESULT = {
  /** No schedule of that name (delete, pause, resume): nothing done. */
  notFound: 0,
  done: 1,
  /** A put over a schedule declared in code (not a runtime one) without `force`: nothing done. */
  declared: 2,
} as const;

/**
 * Lifetimes of a task's markers, ms: its uid key (an explicit `taskId`, META.uniqueId) and its
 * schedule's overlap key (META.overlapSkip). Every marker is bounded, so a task that vanished by any
 * path (deleted, evicted, lost with a dead worker) frees its id and its schedule within these.
 */
/**
 * A schedule's fire history (scheduler/history.ts): a capped LIST, newest first. `limit`: most
 * records kept; `trimSlack`: a writer trims to `limit` once the list holds `limit + trimSlack`
 * (one LTRIM per `trimSlack` records); `ttlMs`: the list expires this long after its TTL was last
 * renewed (30 days), so a removed schedule's history goes away.
 */
export const HISTORY = { limit: 100, trimSlack: 10, ttlMs: 30 * 24 * 60 * 60_000 } as const;

export const MARKER_TTL = {
  /**
   * While the task waits in the stream (not fetched yet, or put back), and past its due time while it
   * is scheduled or waits for a retry (TTL = wait until due + this): 1 h.
   */
  waitingMs: 3_600_000,
  /** While a worker holds the task, in visibility timeouts: the worker renews the markers with its claims (claim.lua). */
  activeVisibilityTimeouts: 3,
} as const;

/**
 * How long `<q>:reclaimed` remembers the entries recover.lua took from another consumer, so that a
 * late ack (or retry) of their old owner is told apart from an entry that is gone: by age (ms) and
 * by count, whichever is smaller.
 */
export const RECLAIMED_MEMORY = {
  keepMs: 86_400_000,
  keepCount: 10_000,
} as const;

/**
 * The layout of a queue's counts (`QueueKeys.counts`): a STRING of u32 slots (`BITFIELD … u32 #i`).
 * Slots 0-3 are stamps: the minute, hour and UTC day (epoch ms ÷ 60,000, ÷ 3,600,000, ÷ 86,400,000)
 * of the last write, and the minute of the last depth sample. Then three rings of buckets, each
 * bucket `fields` slots: `minutes` buckets from `minuteBase`, `hours` from `hourBase`, `days` from
 * `dayBase`; bucket b of a ring is at `base + (b mod size) × fields`. A bucket's fields: tasks
 * `processed` (succeeded), `failed` (attempts that failed: retried or dead), `lost`, and the
 * `depth` (tasks waiting) and `latency` (ms the oldest waited) samples, stored + 1 so that 0 is "no
 * sample" (the largest sample of an hour or day). 468 slots: 1,872 bytes per queue, whatever its
 * traffic; the key's lifetime is renewed once a day (`counterTtlMs`).
 */
export const STATS = {
  stampMinute: 0,
  stampHour: 1,
  stampDay: 2,
  stampSample: 3,
  fields: 5,
  processed: 0,
  failed: 1,
  lost: 2,
  depth: 3,
  latency: 4,
  minutes: 60,
  hours: 24,
  days: 8,
  minuteBase: 8,
  hourBase: 308,
  dayBase: 428,
} as const;

/** What retry.lua and kill.lua reply instead of an instant when the entry was no longer pending for the group. */
export const NOT_PENDING = 0;

/** forward.lua's `nextDueMs` when both the scheduled and the retry sets are empty. */
export const NONE_DUE = -1;

/**
 * The due-time index `<ns>:{<ns>:global}:due` (queue → earliest due time of its delayed and retry
 * tasks, epoch ms): a queue being forwarded has the score `claimBase + Redis time` (a claim mark,
 * above every due time until the year 33658), so an enqueuer's `ZADD LT` of a real due time always
 * replaces it (claim-due.lua, settle-due.lua).
 */
export const DUE_INDEX = {
  claimBase: 1_000_000_000_000_000,
} as const;

/**
 * The shards of a namespace's schedules (docs/scheduler-shards.md): each holds its part of the
 * registry, its indexes and its due index in a hash slot of its own, under a lease of its own.
 * Fixed: every instance of a namespace must agree on it (a schedule's shard is keys.ts `shardOf`).
 */
export const SHARD_COUNT = 16;

/**
 * The due index of a shard (`<ns>:{<tag>}:due`, name → wake instant, epoch ms): a leader writes
 * non-negative integer scores; a registry change marks a schedule "look at it now" with a negative
 * score, −(Redis ms of the change + 0.5): below every wake instant (whatever clock the leader plans
 * by), and never equal to a score a leader read before the change (advance-due.lua's
 * compare-and-set then fails, and the schedule is planned again with its new definition).
 */
export const SHARD_DUE = {
  /** Schedules per take-due.lua call (one batch of a shard's tick). */
  batch: 500,
} as const;

/** The XAUTOCLAIM cursor that starts a scan of the pending entries list, and that recover.lua returns when it is done. */
export const SCAN_START = '0-0';

/** The operations of schedule-admin.lua (ARGV[1]). */
export type AdminOp = 'put' | 'delete' | 'pause' | 'resume';

/**
 * How a queue's groups are served (fetch-limited.lua, enqueue-group.lua, the `groups` snippet):
 * - `catchUp`: a group that enters the round (its first waiting task, or back from a limit) is placed
 *   up to this many turns ahead of the groups already waiting (never ahead of its own last turn), so a
 *   small group's tasks start at once instead of after a round of every backlogged group; a group
 *   that keeps a backlog gets one task per round (Linux fq_codel's "new flows first", bounded);
 * - `absorbMax`: most stream entries of grouped tasks (a retry, a delayed task, a trigger, a
 *   reclaimed task come back through the stream) moved into their groups per fetch;
 * - `recheckMs`: a group held back by its concurrency limit is looked at again after this long even
 *   when no release of its slots was seen (its slots are checked against the pending entries list
 *   then), ms.
 */
export const GROUPS = {
  catchUp: 10,
  absorbMax: 1000,
  recheckMs: 5000,
} as const;

/**
 * fetch-limited.lua's state (its second value): why nothing (or less than asked) was handed out.
 */
export const LIMIT_STATE = {
  /** Not held back: nothing is waiting (the reply names where to block), or tasks were handed out. */
  open: 0,
  /** Every slot of the queue's `concurrency` is taken. */
  concurrency: 1,
  /** The queue's `rate` allows the next start in waitMs. */
  rate: 2,
  /** Tasks wait only in groups held back by their group limits (waitMs: the next re-check, 0 = none known). */
  groups: 3,
  /** Entries of grouped tasks were moved into their groups and more may wait: fetch again at once. */
  again: 4,
} as const;

/**
 * The notice a leader publishes on the cancel channel (keys.ts GlobalKeys.cancelChannel) when
 * fire.lua reports `superseding` (overlap `cancel-previous`): every worker aborts the signal of the
 * runs it has of that schedule in that queue, with an older trigger instant, that hold (held) its
 * overlap marker, with a `TaskSupersededError`. JSON; told apart from an operator's cancel notice
 * (`{ queue, entryId, taskId, actor }`) by `supersededBy`, which versions before it ignore.
 */
export interface SupersedeNotice {
  /** Queue of the schedule's tasks. */
  queue: string;
  /** The schedule. */
  schedule: string;
  /** Task id of the new trigger, its dedup key `<schedule>:<trigger-unix>`. */
  supersededBy: string;
  /** The new trigger's instant, epoch ms: runs of older triggers are superseded. */
  triggerAt: number;
}
