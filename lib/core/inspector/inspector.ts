import { DEFAULTS } from '../defaults.js';
import { InvalidOptionsError } from '../errors.js';
import { closeConnection, openConnection, type ConnectionHandle, type RedisClient, type RedisConnection } from '../redis/connection.js';
import { CONSUMER_GROUP, GlobalKeys, QueueKeys, SchedulerKeys, isValidName } from '../redis/keys.js';
import { decodeEntry, decodeStored, utcDay, type TaskMessage } from '../queue/codec.js';
import { ENTRY_FIELDS, META } from '../redis/protocol.js';
import { storedSpec, type StoredSchedule } from '../scheduler/definition.js';
import { nextTriggers } from '../scheduler/spec.js';

/** Counts of one queue by state, and today's counters (UTC day). @publicApi */
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
  processedToday: number;
  failedToday: number;
}

/** The state of a task as the Inspector reports it. */
export type TaskState = 'pending' | 'active' | 'scheduled' | 'retry' | 'dead';

/** One task as the Inspector shows it. Instants are epoch ms. @publicApi */
export interface TaskInfo {
  id: string;
  type: string;
  queue: string;
  state: TaskState;
  /** Payload as JSON text (it may be invalid JSON for a dead task whose payload could not be decoded). */
  payload: string;
  retried: number;
  maxRetry: number;
  timeoutMs: number;
  enqueuedAt: number;
  schedule?: string;
  triggerAt?: number;
  /** Due time (scheduled/retry) or failed-at time (dead). */
  at?: number;
  lastError?: string;
  failedAt?: number;
  /** Why a dead task is dead. */
  reason?: string;
  /** Times the task was reclaimed from a crashed consumer. */
  crashes?: number;
  /** Stream entry id (pending/active tasks). */
  entryId?: string;
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
  runtime: boolean;
  paused: boolean;
  /** No live instance declares it (and it is not a runtime schedule): it does not fire. */
  orphaned: boolean;
  registeredAt?: number;
  lastFiredAt?: number;
  /** Next trigger instants (epoch ms). */
  next: number[];
  /** Instances that declare it, with when each was last seen (epoch ms, Redis time). */
  declaredBy: { instance: string; lastSeenAt: number }[];
  /** Set when the stored definition cannot be parsed by this version. */
  error?: string;
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

/** Options of an {@link Inspector}. @publicApi */
export interface InspectorOptions {
  connection?: RedisConnection;
  namespace?: string;
  /** An instance is alive when seen within this window, ms. @defaultValue 15000 (3 heartbeats) */
  livenessWindow?: number;
}

/**
 * Read (and a few admin) operations over the Chronos key layout: the single source for the NestJS
 * `InspectorService`, the CLI and the console. Any instance; reads are O(1)/O(log n) per queue
 * except task listings (O(page)).
 * @publicApi
 */
export class Inspector {
  readonly namespace: string;
  private readonly conn: ConnectionHandle;
  private readonly keys: GlobalKeys;
  private readonly sched: SchedulerKeys;
  private readonly livenessMs: number;

  constructor(options: InspectorOptions = {}) {
    this.namespace = options.namespace ?? DEFAULTS.namespace;
    if (!isValidName(this.namespace))
      throw new InvalidOptionsError([`namespace: invalid ${JSON.stringify(this.namespace)}`], 'inspector options');
    this.livenessMs = options.livenessWindow ?? DEFAULTS.instanceHeartbeatMs * 3;
    this.conn = openConnection(options.connection);
    this.keys = new GlobalKeys(this.namespace);
    this.sched = new SchedulerKeys(this.namespace);
  }

  get redis(): RedisClient {
    return this.conn.client;
  }

  async close(): Promise<void> {
    await closeConnection(this.conn);
  }

  /** Queue names known in the namespace (enqueued to, served or scheduled), sorted. */
  async queueNames(): Promise<string[]> {
    return (await this.conn.client.smembers(this.keys.queues)).sort();
  }

  /** Every queue with its counts. */
  async queues(): Promise<QueueInfo[]> {
    const names = await this.queueNames();
    return Promise.all(names.map((n) => this.queue(n)));
  }

  /** One queue's counts (pending = stream length − pending entries list). */
  async queue(name: string): Promise<QueueInfo> {
    const k = new QueueKeys(this.namespace, name);
    const day = utcDay(Date.now());
    const p = this.conn.client.pipeline();
    p.xlen(k.stream);
    p.call('XPENDING', k.stream, CONSUMER_GROUP);
    p.zcard(k.scheduled);
    p.zcard(k.retry);
    p.zcard(k.dead);
    p.sismember(this.keys.paused, name);
    p.get(k.processed(day));
    p.get(k.failed(day));
    const r = (await p.exec())!;
    const len = (r[0][1] as number) ?? 0;
    const active = r[1][0] ? 0 : Number((r[1][1] as [number])[0] ?? 0); // NOGROUP: nobody consumed yet
    return {
      name,
      pending: Math.max(0, len - active),
      active,
      scheduled: r[2][1] as number,
      retry: r[3][1] as number,
      dead: r[4][1] as number,
      paused: r[5][1] === 1,
      processedToday: Number(r[6][1] ?? 0),
      failedToday: Number(r[7][1] ?? 0),
    };
  }

  /** Tasks of a queue in one state, oldest first, paginated. */
  async tasks(queue: string, state: TaskState, { offset = 0, limit = 50 }: { offset?: number; limit?: number } = {}): Promise<TaskInfo[]> {
    const k = new QueueKeys(this.namespace, queue);
    const r = this.conn.client;
    if (state === 'scheduled' || state === 'retry' || state === 'dead') {
      const zset = state === 'dead' ? k.dead : state === 'retry' ? k.retry : k.scheduled;
      const hash = state === 'dead' ? k.deadTasks : k.tasks;
      const rows = await r.zrange(zset, offset, offset + limit - 1, 'WITHSCORES');
      const ids = rows.filter((_, i) => i % 2 === 0);
      if (ids.length === 0) return [];
      const raws = await r.hmget(hash, ...ids);
      return ids.flatMap((id, i) => {
        const raw = raws[i];
        if (!raw) return [];
        return [this.info(queue, state, decodeStored(raw, id), { at: Number(rows[i * 2 + 1]) })];
      });
    }
    const activeIds = await this.activeEntryIds(k);
    if (state === 'active') {
      const ids = [...activeIds].slice(offset, offset + limit);
      const out: TaskInfo[] = [];
      for (const entryId of ids) {
        const [e] = (await r.xrange(k.stream, entryId, entryId)) as [string, string[]][];
        if (e) out.push(this.entryInfo(queue, 'active', e[0], e[1]));
      }
      return out;
    }
    const out: TaskInfo[] = [];
    let start = '-';
    let skipped = 0;
    while (out.length < limit) {
      const batch = (await r.xrange(k.stream, start, '+', 'COUNT', 200)) as [string, string[]][];
      for (const [entryId, fields] of batch) {
        if (activeIds.has(entryId)) continue;
        if (skipped++ < offset) continue;
        out.push(this.entryInfo(queue, 'pending', entryId, fields));
        if (out.length >= limit) break;
      }
      if (batch.length < 200) break;
      start = '(' + batch[batch.length - 1][0];
    }
    return out;
  }

  /** Finds a task by id in a queue, whatever its state; undefined when not found. */
  async task(queue: string, id: string): Promise<TaskInfo | undefined> {
    const k = new QueueKeys(this.namespace, queue);
    const r = this.conn.client;
    for (const [zset, hash, state] of [
      [k.retry, k.tasks, 'retry'],
      [k.scheduled, k.tasks, 'scheduled'],
      [k.dead, k.deadTasks, 'dead'],
    ] as const) {
      const score = await r.zscore(zset, id);
      if (score !== null) {
        const raw = await r.hget(hash, id);
        if (raw) return this.info(queue, state, decodeStored(raw, id), { at: Number(score) });
      }
    }
    const activeIds = await this.activeEntryIds(k);
    let start = '-';
    for (;;) {
      const batch = (await r.xrange(k.stream, start, '+', 'COUNT', 500)) as [string, string[]][];
      for (const [entryId, fields] of batch) {
        const i = fields.indexOf(ENTRY_FIELDS[0]);
        if ((i >= 0 && fields[i + 1] === id) || entryId === id)
          return this.entryInfo(queue, activeIds.has(entryId) ? 'active' : 'pending', entryId, fields);
      }
      if (batch.length < 500) return undefined;
      start = '(' + batch[batch.length - 1][0];
    }
  }

  /** The current leader, or null when nobody holds the lease. */
  async leader(): Promise<LeaderInfo | null> {
    const [[, lease], [, ttl], [, info]] = (await this.conn.client
      .multi()
      .get(this.sched.lease)
      .pttl(this.sched.lease)
      .hgetall(this.sched.leader)
      .exec()) as [[unknown, string | null], [unknown, number], [unknown, Record<string, string>]];
    if (!lease) return null;
    const sep = lease.lastIndexOf('|');
    const instance = lease.slice(0, sep);
    const term = Number(lease.slice(sep + 1));
    return { instance, term, since: info.term === String(term) ? Number(info.since) : NaN, ttlMs: ttl };
  }

  /** Scheduler instances seen in the last day, with liveness. */
  async instances(): Promise<InstanceInfo[]> {
    const rows = await this.conn.client.zrange(this.sched.instances, 0, -1, 'WITHSCORES');
    const now = await this.redisNow();
    const out: InstanceInfo[] = [];
    for (let i = 0; i < rows.length; i += 2) {
      const lastSeenAt = Number(rows[i + 1]);
      out.push({ instance: rows[i], lastSeenAt, alive: now - lastSeenAt <= this.livenessMs });
    }
    return out;
  }

  /** Every registered schedule with its next `n` triggers, last fire, liveness and pause state. */
  async schedules(n = 5): Promise<ScheduleInfo[]> {
    const r = this.conn.client;
    const defs = await r.hgetall(this.sched.schedules);
    const instances = await this.instances();
    const live = instances.filter((i) => i.alive);
    const declaredBy = new Map<string, { instance: string; lastSeenAt: number }[]>();
    for (const inst of live) {
      for (const name of await r.smembers(this.sched.declared(inst.instance))) {
        declaredBy.set(name, [...(declaredBy.get(name) ?? []), { instance: inst.instance, lastSeenAt: inst.lastSeenAt }]);
      }
    }
    const now = Date.now();
    const lastFiredByQueue = new Map<string, Record<string, string>>();
    const out: ScheduleInfo[] = [];
    for (const [name, raw] of Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))) {
      const s = JSON.parse(raw) as StoredSchedule;
      if (!lastFiredByQueue.has(s.queue)) lastFiredByQueue.set(s.queue, await r.hgetall(new QueueKeys(this.namespace, s.queue).lastFired));
      const last = lastFiredByQueue.get(s.queue)![name];
      const info: ScheduleInfo = {
        name,
        expression: s.expression,
        timeZone: s.timeZone,
        queue: s.queue,
        type: s.type,
        catchUp: s.catchUp,
        overlap: s.overlap,
        runtime: s.runtime,
        paused: s.paused === true,
        orphaned: !s.runtime && !declaredBy.has(name),
        registeredAt: s.registeredAt,
        lastFiredAt: last === undefined ? undefined : Number(last),
        next: [],
        declaredBy: declaredBy.get(name) ?? [],
      };
      try {
        info.next = nextTriggers(storedSpec(s), now, n);
      } catch (err) {
        info.error = (err as Error).message;
      }
      out.push(info);
    }
    return out;
  }

  /** Live worker servers (heartbeat within 3 beats). */
  async servers(): Promise<ServerInfo[]> {
    const r = this.conn.client;
    const ids = await r.zrangebyscore(this.keys.servers, Date.now(), '+inf');
    if (ids.length === 0) return [];
    const raws = await r.mget(...ids.map((id) => this.keys.server(id)));
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as ServerInfo] : []));
  }

  /** Pauses a queue for every server (they stop fetching from it within about a second). */
  async pauseQueue(queue: string): Promise<void> {
    await this.conn.client.sadd(this.keys.paused, queue);
  }

  /** Resumes a paused queue. */
  async resumeQueue(queue: string): Promise<void> {
    await this.conn.client.srem(this.keys.paused, queue);
  }

  private async redisNow(): Promise<number> {
    const [s, us] = await this.conn.client.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  private async activeEntryIds(k: QueueKeys): Promise<Set<string>> {
    try {
      const rows = (await this.conn.client.call('XPENDING', k.stream, CONSUMER_GROUP, '-', '+', 10_000)) as [string][];
      return new Set(rows.map((row) => row[0]));
    } catch {
      return new Set(); // no group yet
    }
  }

  private entryInfo(queue: string, state: TaskState, entryId: string, fields: string[]): TaskInfo {
    const d = decodeEntry(entryId, fields);
    const info = this.info(queue, state, d.task, {});
    info.entryId = entryId;
    if (!d.ok) info.lastError = d.error.message;
    return info;
  }

  private info(queue: string, state: TaskState, m: TaskMessage, extra: { at?: number }): TaskInfo {
    const meta = m.meta;
    return {
      id: m.id,
      type: m.type,
      queue,
      state,
      payload: m.payload,
      retried: meta[META.retried] ?? 0,
      maxRetry: meta[META.maxRetry] ?? 0,
      timeoutMs: meta[META.timeoutMs] ?? 0,
      enqueuedAt: meta[META.enqueuedAt] ?? 0,
      schedule: meta[META.schedule],
      triggerAt: meta[META.triggerAt],
      at: extra.at,
      lastError: meta[META.lastError],
      failedAt: meta[META.failedAt],
      reason: meta[META.deadReason],
      crashes: meta[META.crashes],
    };
  }
}
