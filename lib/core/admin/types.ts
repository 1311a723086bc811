import type { EventBus } from '../runtime/events.js';
import type { RedisConnection } from '../redis/connection.js';
import type { QueueLimits } from '../queue/limits.js';

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

/** The windows of a history: `hour` (60 one-minute points), `day` (24 one-hour points). @publicApi */
export type HistoryWindow = 'hour' | 'day';

/** One point of a history: one minute or one hour (its start `at`, epoch ms, Redis time). @publicApi */
export interface HistoryPoint {
  /** Start of the minute or hour, epoch ms. */
  at: number;
  /** Tasks whose handler succeeded in it. */
  processed: number;
  /** Failed attempts in it (retried or dead). */
  failed: number;
  /** Tasks found lost in it. */
  lost: number;
  /**
   * Tasks waiting (pending, not yet delivered, those waiting in groups too) as sampled once a minute by
   * a worker server: the minute's sample, or the largest of the hour's; absent when no server sampled it.
   */
  depth?: number;
  /** How long the oldest waiting task in the stream had waited, ms, sampled with {@link depth} (the largest of an hour); not those in groups. */
  latencyMs?: number;
}

/** One queue's history over a window, oldest point first, the last being the current minute or hour. @publicApi */
export interface QueueHistory {
  /** The queue's name. */
  queue: string;
  /** Which window. */
  window: HistoryWindow;
  /** Length of one point, ms (60,000 or 3,600,000). */
  stepMs: number;
  /** The points, oldest first. */
  points: HistoryPoint[];
}

/** Every queue's history and their total (sums; depth summed over the queues sampled; latency the largest). @publicApi */
export interface FleetHistory {
  /** Which window. */
  window: HistoryWindow;
  /** Length of one point, ms. */
  stepMs: number;
  /** The queues' points added up. */
  total: HistoryPoint[];
  /** Each queue's history, by name. */
  queues: QueueHistory[];
}

/** Counts of one queue by state, latency, daily counters and approximate memory. @publicApi */
export interface QueueInfo {
  /** The queue's name. */
  name: string;
  /** Waiting for a worker: in the stream, not yet delivered, and in the queue's groups. */
  pending: number;
  /** Delivered to a worker and not yet finished (the pending entries list). */
  active: number;
  /** Waiting for their `delay`/`processAt`. */
  scheduled: number;
  /** Failed, waiting for their next attempt. */
  retry: number;
  /** In the dead-letter set. */
  dead: number;
  /** True while an operator has paused the queue: workers fetch nothing from it, enqueues still land. */
  paused: boolean;
  /** `paused`, `limited` (a fleet-wide limit holds it back now: see {@link limitedBy}), or `running`. */
  state: 'running' | 'paused' | 'limited';
  /**
   * The limit holding the queue back now: `concurrency` (every slot taken, tasks wait), `rate` (the
   * window is full, tasks wait), `group` (tasks wait only in groups held back by their limits).
   */
  limitedBy?: 'concurrency' | 'rate' | 'group';
  /** Its fleet-wide limits (`setQueueLimits`), when it has any. */
  limits?: QueueLimits;
  /** With a `rate` limit: tasks handed out in the current window (by Redis time). Slots of `concurrency` taken are {@link active}. */
  rateUsed?: number;
  /** Its groups, when it has grouped tasks. */
  groups?: GroupsView;
  /**
   * Age of the oldest pending task in the queue's stream, ms (Redis time); 0 when none is there. Tasks
   * waiting in a group (counted in {@link pending}) are not looked at (README "Limits and groups").
   */
  latencyMs: number;
  /** Tasks whose handler succeeded today (UTC day): the last of {@link days}. */
  processedToday: number;
  /** Failed attempts today (UTC day), retried or dead: the last of {@link days}. */
  failedToday: number;
  /** Lost tasks over the last 7 days (see {@link DayCounts.lost}). */
  lost: number;
  /** The last 7 UTC days, oldest first (today last). */
  days: DayCounts[];
  /** Approximate memory of the queue's keys, bytes (`MEMORY USAGE … SAMPLES 5` of each). */
  memoryBytes: number;
}

/** A queue's groups as the Inspector shows them. @publicApi */
export interface GroupsView {
  /** Tasks waiting in groups (counted in the queue's `pending`). */
  waiting: number;
  /** Groups with waiting tasks. */
  count: number;
  /** Groups held back by their limits now (`groupConcurrency`, `groupRate`); one whose slot freed or whose wait ended is due for a look at the next fetch, not counted. */
  held: number;
  /** The groups with the most waiting tasks (at most 5). */
  top: GroupCount[];
}

/** One group of a {@link GroupsView}. @publicApi */
export interface GroupCount {
  /** The group's name. */
  group: string;
  /** Its tasks waiting. */
  waiting: number;
  /** Its tasks running (holding a slot of the group). */
  running: number;
}

/** One task as the Inspector shows it. Instants are epoch ms. @publicApi */
export interface TaskInfo {
  /** The task's id: its explicit `taskId`, a generated one (22 base64url characters; a UUID before), or `<schedule>:<trigger-unix>` for a trigger's task. */
  id: string;
  /** The task's type, which selects its handler (empty when the stored task could not be decoded). */
  type: string;
  /** The queue the task is in. */
  queue: string;
  /** Where the task is now. */
  state: TaskState;
  /** The payload, decoded from its JSON; the raw text when it is not valid JSON (then `payloadError` says why). */
  payload: unknown;
  /** Why the payload (or the whole stored task) could not be decoded; absent when it could. */
  payloadError?: string;
  /** Retries already spent (0 before the first failure). */
  retried: number;
  /** Retries allowed after a failure before the task is dead. */
  maxRetry: number;
  /** Timeout of one attempt, ms; 0 = none. */
  timeoutMs: number;
  /** When the task was first enqueued (epoch ms, the producer's clock). */
  enqueuedAt: number;
  /** Its group (enqueue option `group`), absent for an ungrouped task: the group whose limits and turn it is served under. */
  group?: string;
  /** For a trigger's task: its schedule and instant (its id is `<schedule>:<trigger-unix>`). */
  schedule?: string;
  /** For a trigger's task: the trigger instant, epoch ms. */
  triggerAt?: number;
  /** Due time (scheduled/retry) or failed-at time (dead). */
  at?: number;
  /**
   * The last error, with its stack when known (Chronos keeps the last attempt's error only; a
   * task that is not dead carries it too once it failed).
   */
  lastError?: string;
  /** When its last attempt failed (epoch ms, the worker's clock); absent when it never failed. */
  failedAt?: number;
  /** Why a dead task is dead: retries, non-retryable, timeout, poison, decode, no-handler, cancelled. */
  reason?: string;
  /** Times the task was reclaimed from a crashed consumer. */
  crashes?: number;
  /** Stream entry id (pending/active tasks). */
  entryId?: string;
  /** Active tasks: the consumer (worker server id) holding it, how long since it was delivered or claimed (ms), deliveries. */
  consumer?: string;
  /**
   * Active tasks: when its handler started (epoch ms, the worker's clock), as its server's last
   * heartbeat says (every 5 s: absent for a task started since, or held by a server that is gone).
   * "Running for" is now − startedAt; `idleMs` is not: it restarts at every claim renewal.
   */
  startedAt?: number;
  /** Active tasks: ms since the entry was last delivered or claimed (XPENDING idle time, reset by each claim renewal). */
  idleMs?: number;
  /** Active tasks: times the entry was delivered to a consumer (XPENDING delivery count). */
  deliveries?: number;
}

/** A page of tasks and the cursor of the next one (absent at the end). @publicApi */
export interface TaskPage {
  /** The tasks of this page, in listing order (may be fewer than asked when a filter is applied). */
  tasks: TaskInfo[];
  /** Opaque cursor to pass back for the next page; absent when the listing is complete. */
  cursor?: string;
}

/** Which tasks a listing or a bulk act covers. `error` is a case-insensitive substring of the last error. @publicApi */
export interface TaskFilter {
  /** Only tasks of this exact type. */
  type?: string;
  /** Only tasks whose last error contains this text (case-insensitive). */
  error?: string;
  /** Only tasks of this exact group (enqueue option `group`). */
  group?: string;
}

/** One group of dead tasks sharing an error message. @publicApi */
export interface DeadGroup {
  /** The first line of the last error (its message, without the stack). */
  message: string;
  /** Dead tasks in the group (among those scanned). */
  count: number;
  /** Queues the group's tasks are in, sorted. */
  queues: string[];
  /** Task types of the group's tasks, sorted. */
  types: string[];
  /** The newest task of the group, and when it failed (epoch ms). */
  sampleId: string;
  /** When the newest task of the group failed, epoch ms. */
  lastFailedAt: number;
}

/** Dead tasks grouped by error, from a bounded scan. @publicApi */
export interface DeadGroups {
  /** The groups, largest first (then the most recently failed). */
  groups: DeadGroup[];
  /** Dead tasks looked at, and whether the scan stopped at its bound before the end. */
  scanned: number;
  /** True when the scan stopped at its bound: counts cover only the tasks scanned. */
  truncated: boolean;
}

/** What a bulk or single act did. @publicApi */
export interface ActResult {
  /** Tasks (or triggers) changed. */
  count: number;
  /** Their ids (at most the first 1000). */
  ids: string[];
  /** Ids left alone, and why (e.g. a dead task whose explicit id is live again). */
  skipped?: {
    /** Id of the task left alone. */
    id: string;
    /** Why it was left alone, in words. */
    reason: string;
  }[];
}

/** The outcome of a backfill. @publicApi */
export interface BackfillResult {
  /** Triggers of the schedule in the range. */
  triggers: number;
  /** Of those, enqueued now (their dedup key was new). */
  enqueued: number;
  /** Of those, fired or backfilled before (their dedup key existed). */
  duplicates: number;
  /** Task ids of the range's triggers (`<schedule>:<trigger-unix>`), enqueued or found. */
  ids: string[];
}

export * from './schedule-types.js';

/** The current leader. @publicApi */
export interface LeaderInfo {
  /** Id of the scheduler instance leading the most shards (of a tie, the one leading the lowest shard). */
  instance: string;
  /** The fencing term of its newest shard lease (incremented at every acquisition). */
  term: number;
  /** When that lease began (epoch ms, Redis time; NaN when unknown). */
  since: number;
  /** Remaining time of its shard lease that expires first, ms. */
  ttlMs: number;
  /** Every shard's lease that is held (docs/scheduler-shards.md: 16 shards, led by the fleet's instances in fair shares). */
  shards: ShardLeaseInfo[];
}

/** One shard's lease (see {@link LeaderInfo.shards}). @publicApi */
export interface ShardLeaseInfo {
  /** The shard, 0 to 15. */
  shard: number;
  /** Id of the scheduler instance leading it. */
  instance: string;
  /** The lease's fencing term. */
  term: number;
  /** Remaining lease time, ms. */
  ttlMs: number;
}

/**
 * A worker server (from its heartbeat and its presence): every server whose heartbeat is within three
 * beats, and past that one that still holds entries in its queues' pending entries lists (stopped,
 * hung, or gone without anyone finding it dead yet), as `overdue`. @publicApi
 */
export interface ServerInfo {
  /** The server's id (also its consumer name in each queue's consumer group). */
  id: string;
  /** Host name of the machine it runs on. */
  host: string;
  /** Its process id. */
  pid: number;
  /** The queues it serves, each with its weight. */
  queues: Record<string, number>;
  /** Most handlers it runs at once. */
  concurrency: number;
  /** Handlers running at the last heartbeat. */
  active: number;
  /** Tasks it completed successfully since it started. */
  processed: number;
  /** Failed attempts since it started (retried or dead), a task of a type it has no handler for included. */
  failed: number;
  /** When the server started, epoch ms (its clock). */
  startedAt: number;
  /** When it wrote this heartbeat, epoch ms (its clock); heartbeats expire after three beats. */
  heartbeatAt: number;
  /**
   * `live` while its presence tick (every 2.5 s, from its main event loop) is on time; `overdue` once its
   * presence in `<ns>:live` has passed (README "Liveness terms": its main loop stopped — stopped, hung,
   * busy, or dead and not yet found so). An overdue server's tasks run again elsewhere after the
   * visibility timeout, or at once when it is found dead (then it is no longer listed).
   */
  state: 'live' | 'overdue';
  /** Overdue servers only: how many entries it holds in the pending entries lists of its queues (tasks it took and has not settled). */
  pending?: number;
}

/** A scheduler instance and when it was last seen. @publicApi */
export interface InstanceInfo {
  /** The scheduler instance id. */
  instance: string;
  /** When it last declared its schedules (epoch ms, Redis time). */
  lastSeenAt: number;
  /**
   * True when `lastSeenAt` is within the liveness window, or while the instance's declaration of its
   * schedules lives (a TTL of 3 of the instance's own heartbeats, whatever the Inspector's window).
   */
  alive: boolean;
}

/** The Redis server, from one `INFO`. @publicApi */
export interface RedisInfo {
  /** `redis_version`, e.g. `7.0.15`. */
  version: string;
  /** `standalone`, `cluster` or `sentinel` (`redis_mode`). */
  mode: string;
  /** `master` or `slave` (replication role). */
  role: string;
  /** Memory Redis uses, bytes (`used_memory`). */
  usedMemoryBytes: number;
  /** 0 = no limit. */
  maxMemoryBytes: number;
  /** Eviction policy (`maxmemory_policy`); Chronos needs `noeviction`. */
  maxMemoryPolicy: string;
  /** Client connections open now (`connected_clients`). */
  connectedClients: number;
  /** Time since the server started, ms (`uptime_in_seconds` × 1000). */
  uptimeMs: number;
  /** Set unless the policy is `noeviction`: Redis may then evict leases, dedup keys or whole queues. */
  warning?: string;
}

/** Options of an {@link Inspector}. @publicApi */
export interface InspectorOptions {
  /** Redis to inspect. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix of the app to inspect (the same as its client's and server's). @defaultValue 'chronos' */
  namespace?: string;
  /**
   * An instance is alive when seen within this window, ms (one that declares schedules also while its
   * declaration lives: 3 of its own heartbeats). @defaultValue 15000 (3 heartbeats)
   */
  livenessWindow?: number;
  /** Where `operator.acted` events go (the Nest module passes the app's bus). */
  events?: EventBus;
  /** Who acts, when an act names nobody (`{ actor }`). @defaultValue 'inspector' */
  actor?: string;
  /** From where acts come, when an act does not say (`{ origin }`), for the audit trail. @defaultValue none */
  origin?: string;
  /**
   * Write the definitions `addSchedule` stores in the compact stored form (see the scheduler's
   * `compactSchedules`: only once every instance of the namespace runs this version or a later one). @defaultValue false
   */
  compactSchedules?: boolean;
  /**
   * The largest payload `addSchedule` stores, in UTF-8 bytes of its JSON (as the client's
   * `maxPayloadBytes` of an enqueue: each trigger copies it into a task); a bigger one is an
   * InvalidScheduleError naming its size and the limit. 0 = no limit. @defaultValue 1048576 (1 MiB)
   */
  maxPayloadBytes?: number;
}

/** Who does an act and from where (named in its `operator.acted` event and its audit entry). */
export interface ActOptions {
  /** Who acts, e.g. `cli:ada@host`. @defaultValue the Inspector's `actor` option */
  actor?: string;
  /** From where, for the audit trail, e.g. `console 10.0.0.7`, `cli ops-box`. @defaultValue the Inspector's `origin` option */
  origin?: string;
}
