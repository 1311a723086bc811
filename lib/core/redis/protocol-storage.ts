// The wire protocol's lifetimes, limits and layouts of what Redis stores (re-exported by protocol.ts).

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
 * How long fetch-limited.lua remembers a consumer's last hand-out (`<q>:handout:<consumer>`: its fetch
 * token and the entry ids), ms: a fetch sent again with the same token (ioredis resends a command whose
 * reply was lost with its connection; the limiter repeats a fetch that failed) gets those entries
 * again instead of more, so a hand-out whose reply was lost neither holds the limit's slots until the
 * visibility timeout nor takes new ones.
 */
export const HANDOUT_MEMORY = {
  keepMs: 300_000,
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
 *   then), ms;
 * - `idleMax`: most groups out of the round whose last turn is remembered (`<q>:groups-idle`). Turns
 *   within `catchUp` of the highest served are kept, the lowest go first past this count: a group
 *   forgotten re-enters at the floor, at most `catchUp` turns ahead, as a new group does. Without it
 *   a queue whose groups each get one task (a group per order or per entity) kept one member per group
 *   ever seen, for good (trial 28: 10,000 groups, 1.2 MB, never trimmed, since no turn passed the
 *   floor).
 */
export const GROUPS = {
  catchUp: 10,
  absorbMax: 1000,
  recheckMs: 5000,
  idleMax: 10_000,
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
