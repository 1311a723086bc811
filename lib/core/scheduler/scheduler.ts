import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import { DEFAULTS } from '../defaults.js';
import { ChronosStateError, DuplicateScheduleError, InvalidOptionsError, ScheduleNotFoundError } from '../errors.js';
import { EventBus } from '../events.js';
import { consoleLogger, FailureLog, type ChronosLogger } from '../logger.js';
import { encodeMeta, type TaskMeta } from '../queue/codec.js';
import { newInstanceId } from '../instance-id.js';
import {
  checkServer,
  closeClient,
  closeConnection,
  duplicateConnection,
  openConnection,
  type ConnectionHandle,
  type RedisClient,
  type RedisConnection,
} from '../redis/connection.js';
import { GlobalKeys, QueueKeys, SchedulerKeys, isValidName } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import {
  fireDedupTtlMs,
  fireLeadMs,
  storedSpec,
  toStored,
  triggerKey,
  type ScheduleDefinition,
  type StoredSchedule,
} from './definition.js';
import { LeaderLease } from './lease.js';
import { triggersBetween, type ScheduleSpec } from './spec.js';

/**
 * Options of a {@link Scheduler}. Durations are milliseconds.
 * @publicApi
 */
export interface SchedulerOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app: two namespaces never share a lease or a schedule. @defaultValue 'chronos' */
  namespace?: string;
  /** Id of this instance (the lease holder's name). @defaultValue `<hostname>:<pid>:<random>` */
  instanceId?: string;
  /** Leader lease TTL, ms (≥ 1000); renewed every TTL/2. @defaultValue 5000 */
  leaderTtl?: number;
  /** Whether this instance may become leader. Non-eligible instances still declare their schedules. @defaultValue true */
  eligible?: boolean;
  /** Default IANA time zone of cron schedules. @defaultValue 'UTC' */
  timeZone?: string;
  /** Liveness heartbeat of this instance, ms. @defaultValue 5000 */
  heartbeatInterval?: number;
  logger?: ChronosLogger;
  events?: EventBus;
  /** Local clock (timers only: what is due is decided by Redis server time). @defaultValue Date.now */
  clock?: Clock;
  /**
   * Test hook: decide what is due by `clock` instead of Redis `TIME` (for fake-clock DST tests).
   * Never set it in production: a skewed clock would fire early. @defaultValue false
   */
  trustLocalClock?: boolean;
  /**
   * Test hook, called before each tick of the firing loop (it may block the event loop); returning
   * `'double'` runs that tick twice in a row (dist-cases B20).
   */
  tickHook?: () => 'double' | void;
}

const OPTION_KEYS = new Set([
  'connection', 'namespace', 'instanceId', 'leaderTtl', 'eligible', 'timeZone', 'heartbeatInterval', 'logger', 'events', 'clock',
  'trustLocalClock', 'tickHook',
]);

/** One schedule as the leader tracks it. */
interface Entry {
  stored: StoredSchedule;
  spec: ScheduleSpec;
  keys: QueueKeys;
  lastFired: number;
  next: number | null;
  live: boolean;
  dedupTtlMs: number;
  /** How long before its instant a trigger is enqueued, ms (workers start it at the instant). */
  leadMs: number;
}

interface FireItem {
  entry: Entry;
  triggerAt: number;
  mode: 'a' | 's' | 'x';
}

/** Fire-script calls carry at most this many triggers (keeps each script short for Redis). */
const FIRE_CHUNK = 250;

/**
 * The leader-elected scheduler. Every instance runs one: it publishes the schedules it declares,
 * campaigns for the lease, and — while it leads — enqueues every trigger of every live schedule
 * exactly once, fleet-wide: each trigger goes through `fire.lua` (dedup key
 * `<schedule>:<trigger-unix>` SET NX + enqueue + lastFired, atomic, refused if not due by Redis
 * time). A new leader fires every trigger in (lastFired, now] under the catch-up policy.
 * @publicApi
 */
export class Scheduler {
  readonly instanceId: string;
  readonly namespace: string;
  readonly events: EventBus;
  private readonly keys: SchedulerKeys;
  private readonly globalKeys: GlobalKeys;
  private readonly conn: ConnectionHandle;
  private readonly logger: ChronosLogger;
  private readonly clock: Clock;
  private readonly trustLocalClock: boolean;
  private readonly tickHook?: () => 'double' | void;
  private readonly leaderTtlMs: number;
  private readonly eligible: boolean;
  private readonly timeZone: string;
  private readonly heartbeatMs: number;
  private readonly declared = new Map<string, StoredSchedule>();
  private readonly lease: LeaderLease;
  private subscriber?: RedisClient;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private heartbeatTimer?: NodeJS.Timeout;
  private tickTimer?: NodeJS.Timeout;
  private table = new Map<string, Entry>();
  private loadedVersion = -1;
  private leading = false;
  private work: Promise<void> = Promise.resolve();
  private clockOffsetMs = 0;
  private bestRttMs = Infinity;
  private offsetSamples = 0;
  private readonly tickFailures: FailureLog;
  private readonly heartbeatFailures: FailureLog;
  private readonly orphanLogged = new Set<string>();

  constructor(options: SchedulerOptions = {}) {
    const issues: string[] = [];
    for (const key of Object.keys(options)) if (!OPTION_KEYS.has(key)) issues.push(`unknown option "${key}"`);
    this.namespace = options.namespace ?? DEFAULTS.namespace;
    if (!isValidName(this.namespace)) issues.push(`namespace: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(this.namespace)}`);
    this.leaderTtlMs = options.leaderTtl ?? DEFAULTS.leaderTtlMs;
    if (!Number.isInteger(this.leaderTtlMs) || this.leaderTtlMs < 1000) issues.push(`leaderTtl: expected an integer >= 1000 (ms), got ${String(options.leaderTtl)}`);
    this.heartbeatMs = options.heartbeatInterval ?? DEFAULTS.instanceHeartbeatMs;
    if (!Number.isInteger(this.heartbeatMs) || this.heartbeatMs < 100) issues.push(`heartbeatInterval: expected an integer >= 100 (ms), got ${String(options.heartbeatInterval)}`);
    this.timeZone = options.timeZone ?? DEFAULTS.timeZone;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: this.timeZone });
    } catch {
      issues.push(`timeZone: unknown IANA time zone ${JSON.stringify(this.timeZone)}`);
    }
    if (issues.length) throw new InvalidOptionsError(issues, 'scheduler options');
    this.instanceId = options.instanceId ?? newInstanceId();
    this.eligible = options.eligible ?? true;
    this.events = options.events ?? new EventBus();
    this.logger = options.logger ?? consoleLogger('Scheduler');
    this.clock = options.clock ?? systemClock;
    this.trustLocalClock = options.trustLocalClock ?? false;
    this.tickHook = options.tickHook;
    this.keys = new SchedulerKeys(this.namespace);
    this.globalKeys = new GlobalKeys(this.namespace);
    this.conn = openConnection(options.connection);
    this.tickFailures = new FailureLog(this.logger, 'Firing schedules');
    this.heartbeatFailures = new FailureLog(this.logger, 'Scheduler heartbeat');
    this.lease = new LeaderLease(this.conn.client, this.keys, this.instanceId, this.leaderTtlMs, this.logger, {
      acquired: (term) => this.onAcquired(term),
      lost: (term, reason) => this.onLost(term, reason),
      version: (v) => v !== this.loadedVersion && this.leading && this.serial(() => this.load(false)),
      clockSample: (offset, rtt) => this.clockSample(offset, rtt),
    }, () => this.clock.now());
  }

  /** True while this instance leads (holds the lease by its own clock). */
  get isLeader(): boolean {
    return this.leading && this.lease.isLeader;
  }

  /** Fencing term of this instance's current or last leadership (0 if it never led). */
  get term(): number {
    return this.lease.term;
  }

  /**
   * Health of this scheduler: whether it runs, leads (and its term), and whether its heartbeat
   * and firing loop are failing (since when, the last error).
   */
  health(): { running: boolean; leader: boolean; term: number; heartbeat: FailureLog['status']; firing: FailureLog['status'] } {
    return { running: this.state === 'running', leader: this.isLeader, term: this.term, heartbeat: this.heartbeatFailures.status, firing: this.tickFailures.status };
  }

  /** Schedules declared by this instance (code-defined), in registry form. */
  get declaredSchedules(): StoredSchedule[] {
    return [...this.declared.values()];
  }

  /**
   * Declares a schedule (before start). Its definition is published to Redis at start.
   * @throws InvalidScheduleError for a bad spec, zone or option (naming the schedule and the value).
   * @throws DuplicateScheduleError when the name is already declared here.
   * @throws ChronosStateError after start (use {@link addSchedule} then).
   */
  register(def: ScheduleDefinition, source?: string): StoredSchedule {
    if (this.state !== 'new') {
      throw new ChronosStateError(`Schedule "${def?.name}" cannot be registered after start: use addSchedule() to add a schedule at run time`);
    }
    const { stored } = toStored(def, this.timeZone, false);
    if (this.declared.has(stored.name)) throw new DuplicateScheduleError(stored.name, source);
    this.declared.set(stored.name, stored);
    return stored;
  }

  /**
   * Publishes declared schedules, starts the liveness heartbeat and (if eligible) campaigns.
   * @throws RedisVersionError on Redis < 6.2; ChronosStateError when started twice.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new ChronosStateError(`Scheduler ${this.instanceId} cannot start: it is ${this.state}`);
    this.state = 'running';
    await checkServer(this.conn.client);
    await this.publish();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    if (this.eligible) {
      this.subscriber = duplicateConnection(this.conn.client);
      this.subscriber.on('message', () => this.lease.onResignation());
      await this.subscriber.subscribe(this.keys.resignChannel);
      this.lease.start();
    }
    this.logger.log(
      `Scheduler started (instance=${this.instanceId} schedules=${this.declared.size} eligible=${this.eligible} leaderTtlMs=${this.leaderTtlMs})`,
    );
  }

  /** Stops firing and resigns (compare-and-delete + notice, so a follower takes over at once). Idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    const wasRunning = this.state === 'running';
    this.state = 'stopped';
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.tickTimer);
    if (wasRunning) {
      await this.work.catch(() => {});
      await this.lease.stop();
      if (this.subscriber) await closeClient(this.subscriber);
    }
    await closeConnection(this.conn);
  }

  // ------------------------------------------------------------------ runtime API

  /**
   * Adds (or replaces) a schedule at run time. It lives in Redis, so the leader fires it whichever
   * instance added it; it is never orphaned. @throws InvalidScheduleError
   */
  async addSchedule(def: ScheduleDefinition): Promise<void> {
    const { stored } = toStored(def, this.timeZone, true);
    await runScript(this.conn.client, 'schedule-admin', [this.keys.schedules, this.keys.version], ['put', stored.name, JSON.stringify(stored)]);
    await this.conn.client.sadd(this.globalKeys.queues, stored.queue); // the Inspector lists its queue from now on
  }

  /** Removes a schedule from the registry. @throws ScheduleNotFoundError */
  async removeSchedule(name: string): Promise<void> {
    await this.admin('delete', name);
  }

  /** Pauses a schedule fleet-wide (its triggers are skipped while paused). @throws ScheduleNotFoundError */
  async pauseSchedule(name: string): Promise<void> {
    await this.admin('pause', name);
  }

  /** Resumes a paused schedule. @throws ScheduleNotFoundError */
  async resumeSchedule(name: string): Promise<void> {
    await this.admin('resume', name);
  }

  /**
   * Enqueues one task of the schedule now, without shifting its cadence (lastFired is untouched).
   * @returns the task id. @throws ScheduleNotFoundError
   */
  async triggerNow(name: string): Promise<string> {
    const raw = await this.conn.client.hget(this.keys.schedules, name);
    if (!raw) throw new ScheduleNotFoundError(name);
    const s = JSON.parse(raw) as StoredSchedule;
    const keys = new QueueKeys(this.namespace, s.queue);
    const now = this.now();
    const id = `${name}:manual:${randomUUID()}`;
    const meta: TaskMeta = { r: 0, m: s.maxRetry, t: s.timeoutMs, e: now, s: name, tr: now };
    await this.conn.client.xadd(keys.stream, '*', 'id', id, 'type', s.type, 'payload', s.payload, 'meta', encodeMeta(meta));
    await this.conn.client.sadd(this.globalKeys.queues, s.queue);
    return id;
  }

  private async admin(op: 'delete' | 'pause' | 'resume', name: string): Promise<void> {
    const [done] = await runScript<[number, number]>(this.conn.client, 'schedule-admin', [this.keys.schedules, this.keys.version], [op, name]);
    if (done === 0) throw new ScheduleNotFoundError(name);
  }

  /** Wakes the firing loop at once (for fake clocks that jump). */
  clockChanged(): void {
    if (this.leading) this.serial(() => this.tick(false));
  }

  // ------------------------------------------------------------------ registry and liveness

  private async publish(): Promise<void> {
    const args: string[] = [this.instanceId, String(this.heartbeatMs * 3), this.trustLocalClock ? String(this.clock.now()) : ''];
    for (const s of this.declared.values()) args.push(s.name, JSON.stringify(s));
    await runScript(this.conn.client, 'register-schedules', [this.keys.schedules, this.keys.version, this.keys.instances, this.keys.declared(this.instanceId)], args);
    if (this.declared.size > 0) {
      const queues = new Set([...this.declared.values()].map((s) => s.queue));
      await this.conn.client.sadd(this.globalKeys.queues, ...queues);
    }
  }

  private async heartbeat(): Promise<void> {
    try {
      const [ok] = await runScript<[number, number]>(
        this.conn.client,
        'heartbeat',
        [this.keys.instances, this.keys.declared(this.instanceId)],
        [this.instanceId, this.heartbeatMs * 3, this.declared.size > 0 ? '1' : '0'],
      );
      if (ok === 0) {
        this.logger.warn('The schedule registry lost this instance\'s declarations (Redis restarted without persistence?): publishing them again');
        await this.publish();
      }
      if (this.leading) this.serial(() => this.refreshLiveness());
      this.heartbeatFailures.ok();
    } catch (err) {
      this.heartbeatFailures.failed(err);
    }
  }

  /** Names declared by at least one live instance (seen within 3 heartbeats), plus our own. */
  private async liveNames(): Promise<Set<string>> {
    const since = this.now() - this.heartbeatMs * 3;
    const ids = await this.conn.client.zrangebyscore(this.keys.instances, since, '+inf');
    const names = ids.length ? await this.conn.client.sunion(...ids.map((id) => this.keys.declared(id))) : [];
    return new Set([...names, ...this.declared.keys()]);
  }

  private async refreshLiveness(): Promise<void> {
    const live = await this.liveNames();
    for (const e of this.table.values()) this.setLive(e, e.stored.runtime || live.has(e.stored.name));
  }

  private setLive(e: Entry, live: boolean): void {
    if (!live && !this.orphanLogged.has(e.stored.name)) {
      this.orphanLogged.add(e.stored.name);
      this.logger.warn(`Schedule is orphaned: no live instance declares it; it does not fire (schedule=${e.stored.name})`);
    } else if (live && this.orphanLogged.delete(e.stored.name)) {
      this.logger.log(`Schedule is declared again; it fires (schedule=${e.stored.name})`);
    }
    e.live = live;
  }

  // ------------------------------------------------------------------ leading

  private onAcquired(term: number): void {
    this.leading = true;
    this.events.emit({ type: 'leader.acquired', instanceId: this.instanceId, term });
    this.serial(() => this.load(true));
  }

  private onLost(term: number, reason: string): void {
    this.leading = false;
    clearTimeout(this.tickTimer);
    this.events.emit({ type: 'leader.lost', instanceId: this.instanceId, term, reason });
  }

  /** Runs leader work one piece at a time (a load never overlaps a tick). */
  private serial(fn: () => Promise<void>): void {
    this.work = this.work.then(fn).catch((err) => {
      this.tickFailures.failed(err);
      if (this.leading) this.armTimer(this.tickFailures.backoffMs);
    });
  }

  /** Loads the registry and lastFired; on acquisition, applies the catch-up policy to what came due while nobody led. */
  private async load(acquisition: boolean): Promise<void> {
    if (!this.leading) return;
    const [[, defs], [, version]] = (await this.conn.client.multi().hgetall(this.keys.schedules).get(this.keys.version).exec()) as [
      [unknown, Record<string, string>],
      [unknown, string | null],
    ];
    this.loadedVersion = Number(version ?? 0);
    const live = await this.liveNames();
    const table = new Map<string, Entry>();
    const byQueue = new Map<string, Entry[]>();
    for (const [name, raw] of Object.entries(defs)) {
      let stored: StoredSchedule;
      let spec: ScheduleSpec;
      try {
        stored = JSON.parse(raw) as StoredSchedule;
        spec = storedSpec(stored);
      } catch (err) {
        this.logger.error(`Schedule definition in Redis is invalid; it does not fire (schedule=${name} error=${(err as Error).message})`);
        continue;
      }
      const keys = new QueueKeys(this.namespace, stored.queue);
      const entry: Entry = {
        stored,
        spec,
        keys,
        lastFired: stored.registeredAt ?? this.now(),
        next: null,
        live: false,
        dedupTtlMs: fireDedupTtlMs(stored, spec),
        leadMs: fireLeadMs(stored, spec),
      };
      this.setLive(entry, stored.runtime || live.has(name));
      table.set(name, entry);
      byQueue.set(stored.queue, [...(byQueue.get(stored.queue) ?? []), entry]);
    }
    for (const [queue, entries] of byQueue) {
      const last = await this.conn.client.hgetall(new QueueKeys(this.namespace, queue).lastFired);
      for (const e of entries) {
        if (last[e.stored.name] !== undefined) e.lastFired = Number(last[e.stored.name]);
        e.next = e.spec.nextAfter(e.lastFired);
      }
    }
    this.table = table;
    await this.tick(acquisition);
  }

  /** Redis time now (estimated from the last samples), or the test clock. */
  private now(): number {
    return this.clock.now() + (this.trustLocalClock ? 0 : this.clockOffsetMs);
  }

  private clockSample(offset: number, rtt: number): void {
    // keep the sample of the shortest round trip; let it age out slowly (clocks drift)
    this.offsetSamples++;
    if (rtt <= this.bestRttMs || this.offsetSamples % 20 === 0) {
      this.bestRttMs = rtt;
      this.clockOffsetMs = offset;
    }
  }

  /** Fires what is due. `acquisition`: the first tick of a leadership, where the catch-up policy applies. */
  private async tick(acquisition: boolean): Promise<void> {
    clearTimeout(this.tickTimer);
    if (!this.leading || this.state !== 'running') return;
    if (!this.lease.check()) return;
    const now = this.now();
    const items: FireItem[] = [];
    for (const e of this.table.values()) {
      if (!e.live || e.stored.paused || e.next === null || e.next > now + e.leadMs) continue;
      this.plan(e, now, acquisition, items);
    }
    let retryEarly = Infinity;
    if (items.length > 0) retryEarly = await this.fire(items);
    this.tickFailures.ok();
    let next = retryEarly;
    for (const e of this.table.values()) if (e.live && !e.stored.paused && e.next !== null) next = Math.min(next, e.next - e.leadMs);
    // wake at the next trigger (never spin: at least 1 ms); re-check at least every 30 s
    this.armTimer(next === Infinity ? 30_000 : Math.min(30_000, Math.max(1, next - this.now())));
  }

  private armTimer(ms: number): void {
    clearTimeout(this.tickTimer);
    if (!this.leading || this.state !== 'running') return;
    this.tickTimer = setTimeout(() => {
      const double = this.tickHook?.() === 'double';
      this.serial(() => this.tick(false));
      if (double) this.serial(() => this.tick(false));
    }, ms);
  }

  /** Decides which due triggers of one schedule to enqueue and which to skip (window, cap, policy). */
  private plan(e: Entry, now: number, acquisition: boolean, items: FireItem[]): void {
    const s = e.stored;
    const windowStart = now - s.catchUpWindowMs;
    let skipped = 0;
    if (e.lastFired < windowStart) {
      skipped += triggersBetween(e.spec, e.lastFired, windowStart, 0).skipped;
      e.lastFired = windowStart;
    }
    // missed or due now (the catch-up policy and cap apply to these), plus those within the lead
    // (enqueued early; workers start them at their instant)
    const due = triggersBetween(e.spec, e.lastFired, now, s.catchUpCap);
    skipped += due.skipped;
    let missed = due.triggers;
    const upcoming = triggersBetween(e.spec, Math.max(now, e.lastFired), now + e.leadMs, 10).triggers;
    let advanceTo: number | undefined;
    if (acquisition && missed.length > 0 && missed[0] < now - 1000) {
      this.logger.log(
        `Catching up ${missed.length} trigger(s) that came due while nobody led (schedule=${s.name} catchUp=${s.catchUp} oldestLateMs=${Math.round(now - missed[0])})`,
      );
    }
    if (acquisition && missed.length > 0 && s.catchUp !== 'all') {
      if (s.catchUp === 'latest') {
        skipped += missed.length - 1;
        missed = missed.slice(-1);
      } else {
        skipped += missed.length;
        if (upcoming.length === 0) advanceTo = missed[missed.length - 1];
        missed = [];
      }
    }
    const fire = [...missed, ...upcoming];
    if (skipped > 0) {
      this.logger.warn(
        `Skipped ${skipped} missed trigger(s) (schedule=${s.name} catchUp=${s.catchUp} catchUpWindowMs=${s.catchUpWindowMs} catchUpCap=${s.catchUpCap})`,
      );
      this.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt: fire[0] ?? advanceTo ?? now, reason: 'catch-up', count: skipped });
    }
    const mode = s.overlap === 'skip' ? 's' : 'a';
    for (const triggerAt of fire) items.push({ entry: e, triggerAt, mode });
    if (advanceTo !== undefined) items.push({ entry: e, triggerAt: advanceTo, mode: 'x' });
    if (fire.length === 0 && advanceTo === undefined) e.next = e.spec.nextAfter(e.lastFired);
  }

  /** Runs fire.lua per queue (chunked). @returns the earliest trigger Redis found not yet due, or Infinity. */
  private async fire(items: FireItem[]): Promise<number> {
    const byQueue = new Map<string, FireItem[]>();
    for (const i of items) byQueue.set(i.entry.stored.queue, [...(byQueue.get(i.entry.stored.queue) ?? []), i]);
    let retryAt = Infinity;
    const nowArg = this.trustLocalClock ? String(this.clock.now()) : '';
    const leadArg = Math.max(...items.map((i) => i.entry.leadMs));
    for (const queueItems of byQueue.values()) {
      for (let c = 0; c < queueItems.length; c += FIRE_CHUNK) {
        const chunk = queueItems.slice(c, c + FIRE_CHUNK);
        const keys = chunk[0].entry.keys;
        const scriptKeys = [keys.stream, keys.lastFired];
        const args: (string | number)[] = [nowArg, leadArg];
        for (const { entry, triggerAt, mode } of chunk) {
          const s = entry.stored;
          const id = triggerKey(s.name, triggerAt);
          scriptKeys.push(keys.dedup(id));
          if (mode === 's') scriptKeys.push(keys.overlap(s.name));
          const meta: TaskMeta = { r: 0, m: s.maxRetry, t: s.timeoutMs, e: this.now(), s: s.name, tr: triggerAt };
          if (mode === 's') meta.o = 1;
          args.push(s.name, triggerAt, id, s.type, s.payload, encodeMeta(meta), entry.dedupTtlMs, mode);
        }
        if (!this.lease.check()) return Infinity;
        const codes = await runScript<number[]>(this.conn.client, 'fire', scriptKeys, args);
        const redisNow = codes[codes.length - 1];
        chunk.forEach((item, i) => {
          const early = this.settle(item, codes[i]);
          if (early === undefined) return;
          // our estimate of Redis time ran ahead: correct it and come back when the trigger is due
          if (!this.trustLocalClock) this.clockOffsetMs = redisNow - this.clock.now();
          retryAt = Math.min(retryAt, early);
        });
      }
    }
    for (const e of new Set(items.map((i) => i.entry))) e.next = e.spec.nextAfter(e.lastFired);
    return retryAt;
  }

  /** Applies one fire result; returns the trigger instant when Redis found it early. */
  private settle(item: FireItem, code: number): number | undefined {
    const { entry, triggerAt } = item;
    const s = entry.stored;
    if (code === 3) return triggerAt;
    entry.lastFired = Math.max(entry.lastFired, triggerAt);
    if (code === 1) {
      this.events.emit({ type: 'schedule.fired', schedule: s.name, queue: s.queue, taskId: triggerKey(s.name, triggerAt), triggerAt });
    } else if (code === 2) {
      this.logger.warn(`Trigger skipped: the previous task of this schedule is still pending or running (schedule=${s.name} trigger=${triggerKey(s.name, triggerAt)} overlap=skip)`);
      this.events.emit({ type: 'schedule.skipped', schedule: s.name, triggerAt, reason: 'overlap', count: 1 });
    }
    return undefined;
  }
}
