import type { EventBus } from '../events.js';
import type { RedisConnection } from '../redis/connection.js';
import type { FireOutcome, FireRecord } from '../scheduler/history.js';

/** The states of a task, as the Inspector names them. */
export const TASK_STATES = ['pending', 'active', 'scheduled', 'retry', 'dead'] as const;

/** The state of a task as the Inspector reports it. @publicApi */
export type TaskState = (typeof TASK_STATES)[number];

/** Counters of one queue on one UTC day. @publicApi */
export interface DayCounts {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** Tasks whose handler succeeded. */
  processed: number;
  /** Failed attempts (retried or dead). */
  failed: number;
  /** Tasks found lost (a stream entry gone while a worker held it); 0 until the integrity work writes it. */
  lost: number;
}

/** Counts of one queue by state, latency, daily counters and approximate memory. @publicApi */
export interface QueueInfo {
  name: string;
  /** In the stream, not yet delivered to a worker. */
  pending: number;
  /** Delivered to a worker and not yet finished (the pending entries list). */
  active: number;
  /** Waiting for their `delay`/`processAt`. */
  scheduled: number;
  /** Failed, waiting for their next attempt. */
  retry: number;
  /** In the dead-letter set. */
  dead: number;
  paused: boolean;
  /** Age of the oldest pending task, ms (Redis time); 0 when nothing is pending. */
  latencyMs: number;
  processedToday: number;
  failedToday: number;
  /** Lost tasks over the last 7 days (see {@link DayCounts.lost}). */
  lost: number;
  /** The last 7 UTC days, oldest first (today last). */
  days: DayCounts[];
  /** Approximate memory of the queue's keys, bytes (`MEMORY USAGE … SAMPLES 5` of each). */
  memoryBytes: number;
}

/** One task as the Inspector shows it. Instants are epoch ms. @publicApi */
export interface TaskInfo {
  id: string;
  type: string;
  queue: string;
  state: TaskState;
  /** The payload, decoded from its JSON; the raw text when it is not valid JSON (then `payloadError` says why). */
  payload: unknown;
  payloadError?: string;
  retried: number;
  maxRetry: number;
  timeoutMs: number;
  enqueuedAt: number;
  /** For a trigger's task: its schedule and instant (its id is `<schedule>:<trigger-unix>`). */
  schedule?: string;
  triggerAt?: number;
  /** Due time (scheduled/retry) or failed-at time (dead). */
  at?: number;
  /**
   * The last error, with its stack when known (Chronos keeps the last attempt's error only; a
   * task that is not dead carries it too once it failed).
   */
  lastError?: string;
  failedAt?: number;
  /** Why a dead task is dead: retries, non-retryable, timeout, poison, decode, no-handler, cancelled. */
  reason?: string;
  /** Times the task was reclaimed from a crashed consumer. */
  crashes?: number;
  /** Stream entry id (pending/active tasks). */
  entryId?: string;
  /** Active tasks: the consumer (worker server id) holding it, how long since it was delivered or claimed (ms), deliveries. */
  consumer?: string;
  idleMs?: number;
  deliveries?: number;
}

/** A page of tasks and the cursor of the next one (absent at the end). @publicApi */
export interface TaskPage {
  tasks: TaskInfo[];
  cursor?: string;
}

/** Which tasks a listing or a bulk act covers. `error` is a case-insensitive substring of the last error. @publicApi */
export interface TaskFilter {
  type?: string;
  error?: string;
}

/** One group of dead tasks sharing an error message. @publicApi */
export interface DeadGroup {
  /** The first line of the last error (its message, without the stack). */
  message: string;
  count: number;
  queues: string[];
  types: string[];
  /** The newest task of the group, and when it failed (epoch ms). */
  sampleId: string;
  lastFailedAt: number;
}

/** Dead tasks grouped by error, from a bounded scan. @publicApi */
export interface DeadGroups {
  groups: DeadGroup[];
  /** Dead tasks looked at, and whether the scan stopped at its bound before the end. */
  scanned: number;
  truncated: boolean;
}

/** What a bulk or single act did. @publicApi */
export interface ActResult {
  /** Tasks (or triggers) changed. */
  count: number;
  /** Their ids (at most the first 1000). */
  ids: string[];
  /** Ids left alone, and why (e.g. a dead task whose explicit id is live again). */
  skipped?: { id: string; reason: string }[];
}

/** The outcome of a backfill. @publicApi */
export interface BackfillResult {
  /** Triggers of the schedule in the range. */
  triggers: number;
  /** Of those, enqueued now (their dedup key was new). */
  enqueued: number;
  /** Of those, fired or backfilled before (their dedup key existed). */
  duplicates: number;
  ids: string[];
}

/** An operator's pause note. @publicApi */
export interface PauseNote {
  note: string;
  actor: string;
  /** When it was paused (epoch ms, Redis time). */
  at: number;
}

/** One schedule as the Inspector shows it. @publicApi */
export interface ScheduleInfo {
  name: string;
  expression: string;
  timeZone: string;
  queue: string;
  type: string;
  catchUp: string;
  overlap: string;
  /** Added through the runtime API (lives in Redis only) rather than declared in code. */
  runtime: boolean;
  /** `'runtime'` or `'code'` (the same as {@link runtime}, spelled out). */
  origin: 'runtime' | 'code';
  paused: boolean;
  /** The operator's note, while it is paused through the Inspector. */
  pause?: PauseNote;
  /** No live instance declares it (and it is not a runtime schedule): it does not fire. */
  orphaned: boolean;
  registeredAt?: number;
  lastFiredAt?: number;
  /** Next trigger instants (epoch ms). */
  next: number[];
  /** The trigger due next: the first after the last fire (or the registration), in the past while the schedule is late. */
  nextDueAt?: number;
  /** Instances that declare it, with when each was last seen (epoch ms, Redis time) and whether that is within the liveness window. */
  declaredBy: { instance: string; lastSeenAt: number; alive: boolean }[];
  /** Set when the stored definition cannot be parsed by this version. */
  error?: string;
}

/** What became of a fired trigger's task, as far as a bounded look finds it. @publicApi */
export type FireTaskState = TaskState | 'done' | 'unknown';

/** One entry of a schedule's history, with the current state of its task. @publicApi */
export interface FireInfo extends FireRecord {
  outcome: FireOutcome;
  /**
   * Where its task is now: a live state, `done` (no longer in the queue: succeeded, or deleted by
   * an operator), or `unknown` (the bounded look did not reach it). Absent for skips.
   */
  task?: FireTaskState;
}

/** The current leader. @publicApi */
export interface LeaderInfo {
  instance: string;
  term: number;
  /** When this leadership began (epoch ms, Redis time). */
  since: number;
  /** Remaining lease time, ms. */
  ttlMs: number;
}

/** A live worker server (from its heartbeat). @publicApi */
export interface ServerInfo {
  id: string;
  host: string;
  pid: number;
  queues: Record<string, number>;
  concurrency: number;
  active: number;
  processed: number;
  failed: number;
  startedAt: number;
  heartbeatAt: number;
}

/** A scheduler instance and when it was last seen. @publicApi */
export interface InstanceInfo {
  instance: string;
  lastSeenAt: number;
  alive: boolean;
}

/** The Redis server, from one `INFO`. @publicApi */
export interface RedisInfo {
  version: string;
  /** `standalone`, `cluster` or `sentinel` (`redis_mode`). */
  mode: string;
  /** `master` or `slave` (replication role). */
  role: string;
  usedMemoryBytes: number;
  /** 0 = no limit. */
  maxMemoryBytes: number;
  maxMemoryPolicy: string;
  connectedClients: number;
  uptimeMs: number;
  /** Set unless the policy is `noeviction`: Redis may then evict leases, dedup keys or whole queues. */
  warning?: string;
}

/** Options of an {@link Inspector}. @publicApi */
export interface InspectorOptions {
  connection?: RedisConnection;
  namespace?: string;
  /** An instance is alive when seen within this window, ms. @defaultValue 15000 (3 heartbeats) */
  livenessWindow?: number;
  /** Where `operator.acted` events go (the Nest module passes the app's bus). */
  events?: EventBus;
  /** Who acts, when an act names nobody (`{ actor }`). @defaultValue 'inspector' */
  actor?: string;
}

/** Who does an act (named in its `operator.acted` event). */
export interface ActOptions {
  actor?: string;
}
