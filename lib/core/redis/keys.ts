/**
 * The Redis key layout of Chronos: the only code that joins key strings.
 *
 * Every key starts with `<namespace>:` (so `SCAN MATCH <namespace>:*` finds all of an app's keys),
 * and every key one Lua script touches shares one hash tag, so Chronos runs unchanged on Redis
 * Cluster (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags):
 * - per queue:   `<ns>:{<ns>:<queue>}:<suffix>`
 * - scheduler:   `<ns>:{<ns>:sched}:<suffix>` (the shard leases, members, declarations: small, global)
 * - shard k:     `<ns>:{<ns>:sched:<k>[.<j>]}:<suffix>` (a shard's registry, indexes and due index; {@link ShardKeys})
 * - global:      `<ns>:{<ns>:global}:<suffix>` (`queues`, `paused`, `servers`, `live`, `due`, `server:<id>`: one slot of their own)
 */
import { hasLoneSurrogate } from '../runtime/unicode.js';

export { byShard, fnv1a32, ShardKeys, shardKeysFor, shardKeysOf, shardOf, shardTag } from './shard-keys.js';

/** Name of the one consumer group every queue stream has. */
export const CONSUMER_GROUP = 'chronos';

/** The UTC day `YYYY-MM-DD` of an instant (epoch ms): the bucket of the daily counters (`processed:`, `failed:`, `lost:<day>`). */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const NAME_RE = /^[A-Za-z0-9_.\-:]{1,200}$/;

/**
 * True when `name` can be a namespace, queue or schedule name: 1-200 characters of `[A-Za-z0-9_.:-]`
 * (no braces, spaces or control characters), and neither `.` nor `..`: a URL's path normalises those
 * away (browsers do, even as `%2E%2E`), so the console could list such a queue or schedule but not open
 * nor act on it (trial 15).
 */
export function isValidName(name: unknown): name is string {
  return isStoredName(name) && name !== '.' && name !== '..';
}

/**
 * True when `name` can be the name of a queue already in Redis: {@link isValidName}'s characters,
 * `.` and `..` included (accepted before trial 15), so that such a queue can still be read and
 * emptied (by the Inspector, the CLI) where no new one may be made.
 */
export function isStoredName(name: unknown): name is string {
  return typeof name === 'string' && NAME_RE.test(name);
}

/**
 * True when `group` can be a task's group: 1 to 200 characters, none of them a control character
 * (U+0000–U+001F, U+007F–U+009F) or a lone UTF-16 surrogate (Redis keeps text as UTF-8, so a lone
 * surrogate reached it as U+FFFD in the group's keys, and its `\udXXX` escape in the task's meta,
 * which Redis's Lua cannot decode: runtime/unicode.ts).
 */
export function isGroupName(group: unknown): group is string {
  if (typeof group !== 'string' || group.length === 0 || group.length > 200) return false;
  for (let i = 0; i < group.length; i++) {
    const c = group.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return false; // C0, DEL and C1 controls
  }
  return !hasLoneSurrogate(group);
}

/** Keys of one queue. All share the hash tag `{<ns>:<queue>}`. */
export class QueueKeys {
  /** Stream of ready and active tasks (consumer group {@link CONSUMER_GROUP}). */
  readonly stream: string;
  /** ZSET task id → process-at (epoch ms) of tasks enqueued with a delay. */
  readonly scheduled: string;
  /** ZSET task id → retry-at (epoch ms) of failed tasks waiting for their next attempt. */
  readonly retry: string;
  /** HASH task id → encoded task, for tasks in `scheduled` or `retry`. */
  readonly tasks: string;
  /** ZSET task id → failed-at (epoch ms) of dead tasks (the dead-letter set). */
  readonly dead: string;
  /** HASH task id → encoded task with its last error, for tasks in `dead`. */
  readonly deadTasks: string;
  /** HASH schedule name → lastFired (epoch ms) of the schedules that target this queue. */
  readonly lastFired: string;
  /**
   * HASH schedule name → generation: the newest state of the schedule (registry version of its last
   * pause, removal or change) a trigger must be planned under for fire.lua to take it.
   */
  readonly generation: string;
  /** ZSET entry id → when a recoverer took it from its consumer (epoch ms); bounded (protocol.ts RECLAIMED_MEMORY). */
  readonly reclaimed: string;
  /** HASH of the queue's fleet-wide limits: `concurrency`, `rateMax`, `rateMs` (queue/limits.ts). */
  readonly limits: string;
  /** ZSET entry id → when it was handed out (epoch ms, Redis time): the `rate` limit's sliding log. */
  readonly rateLog: string;
  /**
   * The queue's key prefix `<ns>:{<ns>:<queue>}:`, passed to the scripts that serve groups (a group's
   * keys are built on it there: {@link group}, {@link groupRunning}, {@link groupRate}) and to fire.lua
   * (a trigger's {@link dedup}, {@link overlap}, {@link buffered}, {@link runs} and {@link history} keys).
   */
  readonly base: string;
  /** ZSET group → its next turn (a virtual time): the round of groups with waiting tasks, lowest first (fetch-limited.lua). */
  readonly groups: string;
  /** ZSET group → its next turn while it is out of the round (nothing waiting, or held back by a limit); trimmed past GROUPS.catchUp. */
  readonly groupsIdle: string;
  /** ZSET group → tasks waiting in it (the Inspector's "most waiting" groups). */
  readonly groupsWaiting: string;
  /** ZSET group → when to look at it again (epoch ms, Redis time; 0 = a slot freed): groups held back by their limits. */
  readonly groupsParked: string;
  /** HASH group → JSON `{c, rm, rd}`: per-group overrides of the queue's group limits (queue/limits.ts). */
  readonly groupLimits: string;
  /** STREAM (MAXLEN 1): an entry is added when a group enters the round, so a fetch blocked on an idle grouped queue wakes. */
  readonly groupSignal: string;
  /**
   * STRING of u32 slots (`BITFIELD`): the queue's counts per minute (last 60), hour (last 24) and UTC
   * day (last 8), and its sampled depth and latency; fixed size (protocol.ts STATS), written by the
   * scripts that already run per batch (stats.lua) and by sample-queue.lua once a minute.
   */
  readonly counts: string;
  private readonly prefix: string;

  constructor(
    /** Key prefix of the app (e.g. `chronos`). */
    readonly namespace: string,
    /** The queue's name. */
    readonly queue: string,
  ) {
    this.prefix = `${namespace}:{${namespace}:${queue}}:`;
    this.stream = this.prefix + 'stream';
    this.scheduled = this.prefix + 'scheduled';
    this.retry = this.prefix + 'retry';
    this.tasks = this.prefix + 'tasks';
    this.dead = this.prefix + 'dead';
    this.deadTasks = this.prefix + 'dead-tasks';
    this.lastFired = this.prefix + 'last-fired';
    this.generation = this.prefix + 'generation';
    this.reclaimed = this.prefix + 'reclaimed';
    this.limits = this.prefix + 'limits';
    this.rateLog = this.prefix + 'rate-log';
    this.counts = this.prefix + 'counts';
    this.base = this.prefix;
    this.groups = this.prefix + 'groups';
    this.groupsIdle = this.prefix + 'groups-idle';
    this.groupsWaiting = this.prefix + 'groups-waiting';
    this.groupsParked = this.prefix + 'groups-parked';
    this.groupLimits = this.prefix + 'group-limits';
    this.groupSignal = this.prefix + 'group-signal';
  }

  /** ZSET group → when its rate log (`group-rate:<group>`) expires, epoch ms: the group logs alive, kept as long as a window set for them (rate-logs.lua). */
  get groupRateLogs(): string {
    return this.prefix + 'group-rate-logs';
  }

  /**
   * STRING `<token> <entry id>…`: the last hand-out of fetch-limited.lua to `consumer` (its fetch token,
   * the entry ids it handed out), kept HANDOUT_MEMORY.keepMs: a fetch repeated with the token (its reply
   * was lost) gets those entries again.
   */
  handout(consumer: string): string {
    return this.prefix + 'handout:' + consumer;
  }

  /** LIST of the tasks waiting in group `group`, oldest first (each its stored form, codec encodeStored). */
  group(group: string): string {
    return this.prefix + 'group:' + group;
  }

  /**
   * SET of the entry ids holding a slot of group `group` (handed out, not yet acked, retried, dead
   * or reclaimed): a task's marker (codec markerKeys), released on every exit path.
   */
  groupRunning(group: string): string {
    return this.prefix + 'group-running:' + group;
  }

  /** ZSET entry id → when it was handed out (epoch ms, Redis time): the sliding log of group `group`'s rate limit. */
  groupRate(group: string): string {
    return this.prefix + 'group-rate:' + group;
  }

  /** STRING → task id; set NX with a PX TTL by an enqueue that carries a dedup key. */
  dedup(key: string): string {
    return this.prefix + 'dedup:' + key;
  }

  /** STRING → the task id while a task enqueued with an explicit `taskId` is live (not done, not dead); TTL: protocol.ts MARKER_TTL. */
  uniqueId(taskId: string): string {
    return this.prefix + 'uid:' + taskId;
  }

  /**
   * STRING → task id of a schedule's live task, for the overlap policies `skip`, `buffer-one` and
   * `cancel-previous`; with a TTL (protocol.ts MARKER_TTL).
   */
  overlap(schedule: string): string {
    return this.prefix + 'overlap:' + schedule;
  }

  /**
   * STRING → the trigger of a schedule with overlap `buffer-one` that waits behind its live task
   * (layout: codec.ts decodeBuffered); its TTL follows the overlap marker's (overlap.lua).
   */
  buffered(schedule: string): string {
    return this.prefix + 'buffered:' + schedule;
  }

  /**
   * HASH of a schedule with `maxRuns`: `max` (the maxRuns its count was taken under) and `n` (the
   * triggers enqueued, raised by fire.lua only when one is enqueued); deleted with the schedule.
   */
  runs(schedule: string): string {
    return this.prefix + 'runs:' + schedule;
  }

  /** STRING counter of tasks processed (succeeded) on a UTC day `YYYY-MM-DD` (before {@link counts}: read, no longer written). */
  processed(day: string): string {
    return this.prefix + 'processed:' + day;
  }

  /** STRING counter of failed attempts (retried or dead) on a UTC day `YYYY-MM-DD` (before {@link counts}: read, no longer written). */
  failed(day: string): string {
    return this.prefix + 'failed:' + day;
  }

  /**
   * LIST of a schedule's last fires, newest first (JSON records, see scheduler/history.ts): capped
   * at `HISTORY.limit` entries (+ `trimSlack`) and expiring `HISTORY.ttlMs` after its TTL was last
   * renewed (protocol.ts HISTORY). Under the target queue's hash tag, beside `last-fired`: fire.lua
   * writes it in the same call as the fire.
   */
  history(schedule: string): string {
    return this.prefix + 'history:' + schedule;
  }

  /** STRING counter of tasks lost on a UTC day `YYYY-MM-DD` (before {@link counts}: read, no longer written). */
  lost(day: string): string {
    return this.prefix + 'lost:' + day;
  }
}

/** Keys of the scheduler. All share the hash tag `{<ns>:sched}`. */
export class SchedulerKeys {
  /** STRING counter: the fencing term, max(incremented, Redis time ms) at each acquisition, so it never decreases. */
  readonly term: string;
  /**
   * HASH schedule name → definition JSON: the registry of the versions before shards (a rolling
   * deploy's source: migrated into the shards' registries, {@link ShardKeys.schedules}, then emptied).
   */
  readonly legacySchedules: string;
  /**
   * HASH shard number → `<instanceId>|<term>|<expiresAtMs>`: the shard leases, one entry per shard
   * (shards.lua: taken, renewed and balanced in one call per instance).
   */
  readonly shards: string;
  /** ZSET instance id → expires-at (epoch ms, Redis time): the instances campaigning for shards. */
  readonly members: string;
  /**
   * STRING rising counter (max(INCR, Redis time ms)), taken by every registry change: the changed
   * schedules' generation; leaders reload when it moves.
   */
  readonly version: string;
  /** ZSET instance id → last seen (epoch ms, Redis time). */
  readonly instances: string;
  /** Pub/sub channel on which a resigning leader announces it has let go. */
  readonly resignChannel: string;
  /** HASH schedule name → JSON `{ note, actor, at }` of an operator's pause (shown while it is paused). */
  readonly pauseNotes: string;
  /** Pub/sub channel on which every registry change is announced (the leader reloads at once). */
  readonly changesChannel: string;
  /**
   * HASH schedule name → the instant it became orphaned (epoch ms, Redis time: its last declarer's
   * last heartbeat + the liveness window), stored once by the leader while the schedule is orphaned.
   */
  readonly orphaned: string;
  /** The scheduler's key prefix `<ns>:{<ns>:sched}:` (the legacy registry's indexes were built on it). */
  readonly prefix: string;

  /** @param namespace Key prefix of the app (e.g. `chronos`). */
  constructor(readonly namespace: string) {
    this.prefix = `${namespace}:{${namespace}:sched}:`;
    this.term = this.prefix + 'term';
    this.legacySchedules = this.prefix + 'schedules';
    this.shards = this.prefix + 'shards';
    this.members = this.prefix + 'members';
    this.version = this.prefix + 'version';
    this.instances = this.prefix + 'instances';
    this.resignChannel = this.prefix + 'resign';
    this.pauseNotes = this.prefix + 'pause-notes';
    this.changesChannel = this.prefix + 'changes';
    this.orphaned = this.prefix + 'orphaned';
  }

  /**
   * STRING → the digest of the names an instance declares (see {@link names}), with a PX TTL its
   * heartbeat renews: one key per instance, whatever the number of schedules.
   */
  declaration(instanceId: string): string {
    return this.prefix + 'declaration:' + instanceId;
  }

  /**
   * STRING `<incarnation>|<seq>` of an instance's newest shards.lua call that ran, with a PX TTL of
   * its membership (the lease TTL): a call of the same incarnation with a seq at or below it is stale.
   */
  leaseCall(instanceId: string): string {
    return this.prefix + 'lease-call:' + instanceId;
  }

  /**
   * SET of the schedule names with this digest (`<count>.<sha1>` of the sorted names): shared by
   * every instance that declares the same schedules, with a PX TTL their heartbeats renew.
   */
  names(digest: string): string {
    return this.prefix + 'names:' + digest;
  }

  /** SET being filled with the names of `digest` by one instance, renamed to {@link names} when complete. */
  namesBuilding(digest: string, instanceId: string): string {
    return this.prefix + 'names-building:' + digest + ':' + instanceId;
  }
}

/** Keys shared by a namespace. All share the hash tag `{<ns>:global}` (one slot, so a MULTI over them works on a cluster). */
export class GlobalKeys {
  /** SET of queue names ever enqueued to or served. */
  readonly queues: string;
  /** SET of paused queue names; every server stops fetching from them. */
  readonly paused: string;
  /** ZSET worker server id → expires-at (epoch ms). */
  readonly servers: string;
  /**
   * ZSET worker server id → expires-at (epoch ms, Redis time): renewed by each server's presence tick
   * (presence.lua, every `DEFAULTS.livenessCheckMs`), so an overdue score means its main loop stopped.
   */
  readonly live: string;
  /**
   * STRING `<run id> <since, epoch ms>`: the running Redis process (INFO `run_id`) and since when it
   * has been answering the worker servers (Redis time), recorded by the first server that started
   * under it (redis-run.lua); a server that starts counts its reconnect grace from it.
   */
  readonly redisRun: string;
  /**
   * ZSET queue name → earliest due time (epoch ms) of its delayed and retry tasks, or a claim mark
   * while a forwarder moves them (protocol.ts DUE_INDEX): the forwarders' one read per round instead
   * of a poll per queue. A hint kept at or before the real time: enqueuers lower it (`ZADD LT`).
   */
  readonly due: string;
  /**
   * Pub/sub channel of due-time wakes (`<ns>:{<ns>:global}:due:wake`): lower-due.lua publishes
   * `<due time, epoch ms>:<queue>` there when an enqueue or a retry lowered a queue's score in
   * {@link due}, and the worker servers of that queue re-arm their forward timer to it.
   */
  readonly dueWake: string;
  /**
   * Pub/sub channel of pause changes (`<ns>:{<ns>:global}:paused:wake`): a pause or resume publishes
   * the queue name there after writing {@link paused}, and every worker server reads the paused set
   * again at once (the message is a hint; the set is the truth).
   */
  readonly pausedWake: string;
  /**
   * Pub/sub channel of cancel notices: JSON `{ queue, entryId, taskId, actor }`, published after
   * the task was dead-lettered, so the server running it aborts its signal.
   */
  readonly cancelChannel: string;
  /**
   * SET of the names of queues that have fleet-wide limits (their `limits` hash); read by every server
   * at a notice on `limits`, when its subscriber reconnects, and every 30 s.
   */
  readonly limited: string;
  /** Pub/sub channel of limit notices: a queue name, published when its limits change or a slot of its limit frees. */
  readonly limitsChannel: string;
  /**
   * STREAM of the audit trail: one entry per operator act through the Inspector (who, what, where,
   * the result; the entry id is when, Redis time), capped by count and age (admin/audit.ts).
   */
  readonly audit: string;

  private readonly prefix: string;

  /** @param namespace Key prefix of the app (e.g. `chronos`). */
  constructor(readonly namespace: string) {
    this.prefix = `${namespace}:{${namespace}:global}:`;
    this.queues = this.prefix + 'queues';
    this.paused = this.prefix + 'paused';
    this.servers = this.prefix + 'servers';
    this.live = this.prefix + 'live';
    this.redisRun = this.prefix + 'redis-run';
    this.due = this.prefix + 'due';
    this.dueWake = dueWakeChannel(this.due);
    this.pausedWake = this.prefix + 'paused:wake';
    this.cancelChannel = `${namespace}:cancel`;
    this.limited = this.prefix + 'limited';
    this.limitsChannel = `${namespace}:limits`;
    this.audit = this.prefix + 'audit';
  }

  /**
   * Pub/sub channel a worker server stays subscribed to while its process lives (its liveness: Redis
   * drops the subscription when the process's connection closes). Nothing is published on it.
   */
  alive(serverId: string): string {
    return this.aliveChannelPrefix + serverId;
  }

  /** The prefix of every {@link alive} channel (`<ns>:{<ns>:global}:alive:`). */
  get aliveChannelPrefix(): string {
    return this.prefix + 'alive:';
  }

  /** STRING JSON info of one worker server, with a PX TTL. */
  server(serverId: string): string {
    return this.prefix + 'server:' + serverId;
  }
}

/** The wake channel of a due-time index key ({@link GlobalKeys.dueWake}): the key + `:wake`. */
export function dueWakeChannel(dueKey: string): string {
  return dueKey + ':wake';
}
