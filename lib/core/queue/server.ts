import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { DEFAULTS } from '../defaults.js';
import { ChronosStateError, HandlerNotFoundError, InvalidOptionsError, TaskTimeoutError } from '../errors.js';
import { EventBus } from '../events.js';
import { consoleLogger, FailureLog, type ChronosLogger } from '../logger.js';
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
import { CONSUMER_GROUP, GlobalKeys, QueueKeys, isValidName } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { AckBatcher } from './ack-batcher.js';
import { decodeEntry, encodeStored, utcDay, type StreamTask, type TaskMeta } from './codec.js';
import { Mux } from './mux.js';
import { defaultBackoff, type BackoffFn, type Task } from './task.js';

/**
 * Options of a worker server. Durations are milliseconds.
 * @publicApi
 */
export interface ServerOptions {
  /** Redis to use. @defaultValue redis://127.0.0.1:6379 */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis. @defaultValue 'chronos' */
  namespace?: string;
  /** Handlers running at once on this server. @defaultValue 10 */
  concurrency?: number;
  /**
   * Queues to serve: a list (equal weights) or `{ name: weight }` (asynq-style: a queue of
   * weight 6 is tried first about 6 times as often as one of weight 1). @defaultValue ['default']
   */
  queues?: readonly string[] | Readonly<Record<string, number>>;
  /** Serve queues in strict priority (the order of `queues`, or highest weight first). @defaultValue false */
  strictPriority?: boolean;
  /** Grace for in-flight handlers at shutdown before they are aborted and requeued, ms. @defaultValue 8000 */
  shutdownTimeout?: number;
  /** A pending entry idle this long is reclaimed from its (presumably dead) consumer, ms. @defaultValue 30000 */
  visibilityTimeout?: number;
  /** How often this server looks for entries idle past the visibility timeout, ms. @defaultValue 2000 */
  recoverInterval?: number;
  /** Reclaims before a task is dead as poison. @defaultValue 5 */
  maxDeliveries?: number;
  /** Longest wait between checks for due delayed/retry tasks, ms. @defaultValue 1000 */
  forwardInterval?: number;
  /** Longest single blocking read, ms. @defaultValue 1000 */
  blockTimeout?: number;
  /** Retry delay of failed tasks. @defaultValue Sidekiq/asynq formula, see {@link defaultBackoff} */
  backoff?: BackoffFn;
  /** Dead-letter cap by count, per queue. @defaultValue 10000 */
  deadMaxCount?: number;
  /** Dead-letter cap by age, ms. @defaultValue 7776000000 (90 days) */
  deadMaxAge?: number;
  /** Id of this server: its consumer name in every group. @defaultValue `<hostname>:<pid>:<random>` */
  serverId?: string;
  logger?: ChronosLogger;
  /** Event bus shared with the client and scheduler of the app. */
  events?: EventBus;
  /** Handler registry; a new one when omitted. */
  mux?: Mux;
}

const SERVER_KEYS = new Set([
  'connection', 'namespace', 'concurrency', 'queues', 'strictPriority', 'shutdownTimeout', 'visibilityTimeout',
  'recoverInterval', 'maxDeliveries', 'forwardInterval', 'blockTimeout', 'backoff', 'deadMaxCount', 'deadMaxAge',
  'serverId', 'logger', 'events', 'mux',
]);

/** Abort reason of handlers still running when the shutdown grace ends. */
export class ShutdownAbort extends Error {
  constructor() {
    super('the server is shutting down; the task was put back in the queue');
    this.name = 'ShutdownAbort';
  }
}

interface QueueState {
  readonly name: string;
  readonly weight: number;
  readonly keys: QueueKeys;
}

interface Inflight {
  readonly queue: QueueState;
  readonly task: StreamTask;
  readonly ctrl: AbortController;
  abandoned: boolean;
}

interface Fetched {
  readonly queue: QueueState;
  readonly entryId: string;
  readonly fields: string[] | null;
}

/** Where a task's uid and overlap keys are, to release them when it ends. */
export function releaseKeys(keys: QueueKeys, task: { id: string; meta: TaskMeta }): string[] {
  const out: string[] = [];
  if (task.meta.u) out.push(keys.uniqueId(task.id));
  if (task.meta.o && task.meta.s) out.push(keys.overlap(task.meta.s));
  return out;
}

/** Default id of a server or scheduler instance: `<hostname>:<pid>:<6 hex>`. */
export function newInstanceId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  return text.length > 4000 ? text.slice(0, 4000) + '…' : text;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isNonRetryable(err: unknown): boolean {
  return err instanceof Error && (err.name === 'NonRetryableError' || (err as { code?: string }).code === 'NON_RETRYABLE');
}

/** A consumer idle this long with nothing pending belongs to a server that is gone, ms. */
const GONE_CONSUMER_IDLE_MS = 60 * 60_000;

/** How many times a task of an unknown type bounces (short backoff) before it is dead. */
const NO_HANDLER_BOUNCES = 3;

/**
 * A worker server: fetches tasks from its queues with blocking `XREADGROUP` (one consumer group
 * per queue, this server's id as the consumer), runs their handlers with at most `concurrency` at
 * once, acks successes (batched: one script per queue per event-loop turn), retries failures with
 * backoff, dead-letters tasks whose budget is spent, forwards due delayed/retry tasks, and
 * reclaims entries of crashed consumers.
 * @publicApi
 */
export class ChronosServer {
  readonly id: string;
  readonly namespace: string;
  readonly mux: Mux;
  readonly events: EventBus;
  private readonly opts: Required<Omit<ServerOptions, 'connection' | 'namespace' | 'queues' | 'serverId' | 'logger' | 'events' | 'mux'>>;
  private readonly queues: QueueState[];
  private readonly globalKeys: GlobalKeys;
  private readonly logger: ChronosLogger;
  private readonly conn: ConnectionHandle;
  private blocking?: RedisClient;
  private blockingId?: number;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping?: Promise<void>;
  private paused = new Set<string>();
  private active = 0;
  private readonly inflight = new Map<string, Inflight>();
  private readonly buffer: Fetched[] = [];
  private readonly acker: AckBatcher;
  private wakeFetcher?: () => void;
  private loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  /** When the forwarder wakes next (epoch ms, local clock), and how to wake it sooner. */
  private forwarderWake?: { at: number; wake: () => void };
  private readonly idleWaiters = new Set<() => void>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly startedAt = Date.now();
  private processedHere = 0;
  private readonly fetchFailures: FailureLog;
  private readonly forwardFailures: FailureLog;
  private failedHere = 0;

  constructor(options: ServerOptions = {}) {
    const issues: string[] = [];
    for (const key of Object.keys(options)) if (!SERVER_KEYS.has(key)) issues.push(`unknown option "${key}"`);
    const int = (name: keyof ServerOptions, min: number, def: number): number => {
      const v = options[name] ?? def;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min) issues.push(`${name}: expected an integer >= ${min}, got ${String(v)}`);
      return v as number;
    };
    this.opts = {
      concurrency: int('concurrency', 1, DEFAULTS.concurrency),
      strictPriority: options.strictPriority ?? false,
      shutdownTimeout: int('shutdownTimeout', 0, DEFAULTS.shutdownTimeoutMs),
      visibilityTimeout: int('visibilityTimeout', 100, DEFAULTS.visibilityTimeoutMs),
      recoverInterval: int('recoverInterval', 10, DEFAULTS.recoverIntervalMs),
      maxDeliveries: int('maxDeliveries', 1, DEFAULTS.maxDeliveries),
      forwardInterval: int('forwardInterval', 10, DEFAULTS.forwardIntervalMs),
      blockTimeout: int('blockTimeout', 10, DEFAULTS.blockTimeoutMs),
      backoff: options.backoff ?? defaultBackoff,
      deadMaxCount: int('deadMaxCount', 0, DEFAULTS.deadMaxCount),
      deadMaxAge: int('deadMaxAge', 0, DEFAULTS.deadMaxAgeMs),
    };
    if (typeof this.opts.backoff !== 'function') issues.push(`backoff: expected a function (retried, error, task) => ms, got ${typeof this.opts.backoff}`);
    this.namespace = options.namespace ?? DEFAULTS.namespace;
    if (!isValidName(this.namespace)) issues.push(`namespace: expected 1-200 characters of [A-Za-z0-9_.:-], got ${JSON.stringify(this.namespace)}`);
    const q = options.queues ?? [DEFAULTS.queue];
    const entries: [string, number][] = Array.isArray(q) ? q.map((n) => [n, 1]) : Object.entries(q as Record<string, number>);
    if (entries.length === 0) issues.push('queues: expected at least one queue');
    for (const [name, weight] of entries) {
      if (!isValidName(name)) issues.push(`queues: invalid queue name ${JSON.stringify(name)}`);
      if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1) issues.push(`queues.${name}: expected an integer weight >= 1, got ${String(weight)}`);
    }
    if (new Set(entries.map((e) => e[0])).size !== entries.length) issues.push('queues: a queue is listed twice');
    if (issues.length) throw new InvalidOptionsError(issues, 'server options');
    this.queues = entries.map(([name, weight]) => ({ name, weight, keys: new QueueKeys(this.namespace, name) }));
    if (this.opts.strictPriority && !Array.isArray(q)) this.queues.sort((a, b) => b.weight - a.weight);
    this.id = options.serverId ?? newInstanceId();
    this.mux = options.mux ?? new Mux();
    this.events = options.events ?? new EventBus();
    this.logger = options.logger ?? consoleLogger('Worker');
    this.globalKeys = new GlobalKeys(this.namespace);
    this.conn = openConnection(options.connection);
    this.fetchFailures = new FailureLog(this.logger, 'Fetching tasks');
    this.forwardFailures = new FailureLog(this.logger, 'Forwarding due tasks');
    this.acker = new AckBatcher(this.conn.client, this.logger, DEFAULTS.counterTtlMs, (n) => (this.processedHere += n));
  }

  /** The Redis client of this server (shared with the app's client when the app passed one in). */
  get redis(): RedisClient {
    return this.conn.client;
  }

  /** Handlers running now. */
  get activeCount(): number {
    return this.active;
  }

  /** True while the server runs its loops. */
  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * Health of this server's loops: whether it runs, and for the fetch and forward loops whether
   * they are failing (since when, the last error) — e.g. Redis unreachable.
   */
  health(): { running: boolean; fetch: FailureLog['status']; forward: FailureLog['status'] } {
    return { running: this.state === 'running', fetch: this.fetchFailures.status, forward: this.forwardFailures.status };
  }

  /** Names of the queues this server serves. */
  get queueNames(): string[] {
    return this.queues.map((q) => q.name);
  }

  /**
   * Registers a handler (see {@link Mux.handle}); allowed before or after start.
   * @throws DuplicateHandlerError when `type` already has a handler.
   */
  handle<T = unknown>(type: string, fn: (task: Task<T>) => unknown, options?: Parameters<Mux['handle']>[2]): this {
    this.mux.handle(type, fn, options);
    return this;
  }

  /**
   * Starts fetching. Checks the Redis version (>= 6.2) and creates each queue's consumer group.
   * @throws ChronosStateError when started twice; RedisVersionError on an old Redis.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new ChronosStateError(`Server ${this.id} cannot start: it is ${this.state}`);
    this.state = 'starting';
    await checkServer(this.conn.client);
    this.blocking = duplicateConnection(this.conn.client);
    this.blocking.on('ready', () => void this.refreshBlockingId());
    this.blocking.on('error', () => {}); // reported by the fetch loop
    await this.refreshBlockingId();
    await this.ensureGroups();
    await this.conn.client.sadd(this.globalKeys.queues, ...this.queueNames);
    await this.refreshPaused();
    await this.heartbeat();
    this.state = 'running';
    this.loops.push(this.fetchLoop(), this.forwardLoop());
    this.every(this.opts.recoverInterval, () => this.recover(), 'Recovering idle tasks');
    this.every(Math.max(100, Math.floor(this.opts.visibilityTimeout / 3)), () => this.extendClaims(), 'Extending claims');
    this.every(DEFAULTS.serverHeartbeatMs, () => this.heartbeat(), 'Server heartbeat');
    this.every(1000, () => this.refreshPaused(), 'Reading paused queues');
    this.every(5 * 60_000, () => this.deleteGoneConsumers(), 'Deleting consumers of gone servers');
    this.logger.log(
      `Worker started (server=${this.id} queues=${this.queues.map((q) => `${q.name}:${q.weight}`).join(',')} concurrency=${this.opts.concurrency})`,
    );
  }

  /**
   * Pauses a queue for every server of the namespace (they stop fetching from it within about a
   * second). Tasks can still be enqueued. Writes `<ns>:paused`.
   */
  async pause(queue: string): Promise<void> {
    await this.conn.client.sadd(this.globalKeys.paused, queue);
    this.paused.add(queue);
    await this.unblock();
  }

  /** Queues this server currently knows as paused (refreshed from Redis every second). */
  get pausedQueues(): ReadonlySet<string> {
    return this.paused;
  }

  /** Resumes a paused queue on every server. */
  async resume(queue: string): Promise<void> {
    await this.conn.client.srem(this.globalKeys.paused, queue);
    this.paused.delete(queue);
    this.wakeFetcher?.();
  }

  /**
   * Graceful shutdown: stop fetching at once, let in-flight handlers finish for up to
   * `shutdownTimeout` ms, then abort the rest (their signal's reason is a {@link ShutdownAbort})
   * and put their tasks straight back in the queue; close owned connections. Idempotent.
   */
  shutdown(): Promise<void> {
    if (!this.stopping) this.stopping = this.doShutdown();
    return this.stopping;
  }

  private async doShutdown(): Promise<void> {
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    for (const t of this.timers) clearInterval(t);
    for (const wake of this.sleepers) wake();
    this.wakeFetcher?.();
    if (wasRunning) {
      // a read sent just after an UNBLOCK would still block: repeat until the loops have ended
      const loopsDone = Promise.allSettled(this.loops);
      let ended = false;
      void loopsDone.then(() => (ended = true));
      while (!ended) {
        await this.unblock();
        await Promise.race([loopsDone, new Promise((r) => setTimeout(r, 50))]);
      }
      // entries fetched but not started go straight back
      const unstarted = this.buffer.splice(0);
      await this.requeueEntries(unstarted.map((f) => ({ queue: f.queue, entryId: f.entryId })));
      if (this.inflight.size > 0) {
        this.logger.log(`Waiting for ${this.inflight.size} running task(s) (up to ${this.opts.shutdownTimeout} ms)`);
        await this.waitIdle(this.opts.shutdownTimeout);
      }
      const left = [...this.inflight.values()];
      if (left.length > 0) {
        for (const rec of left) {
          rec.abandoned = true;
          rec.ctrl.abort(new ShutdownAbort());
        }
        await this.requeueEntries(left.map((r) => ({ queue: r.queue, entryId: r.task.entryId })));
        this.logger.warn(`Shutdown grace over: ${left.length} task(s) aborted and put back in the queue (ids=${left.map((r) => r.task.id).join(',')})`);
        for (const rec of left) {
          if (this.events.active) this.events.emit({ type: 'task.requeued', queue: rec.queue.name, taskId: rec.task.id, taskType: rec.task.type, reason: 'shutdown' });
        }
      }
      await this.acker.flush();
      await this.releaseOwnPending();
      try {
        await this.conn.client.zrem(this.globalKeys.servers, this.id);
        await this.conn.client.del(this.globalKeys.server(this.id));
      } catch {
        /* Redis gone: the heartbeat key expires by itself */
      }
    }
    this.state = 'stopped';
    if (this.blocking) await closeClient(this.blocking);
    await closeConnection(this.conn);
    if (wasRunning) this.logger.log(`Worker stopped (server=${this.id} processed=${this.processedHere} failed=${this.failedHere})`);
  }

  // ---------------------------------------------------------------- fetching

  private async fetchLoop(): Promise<void> {
    const failures = this.fetchFailures;
    while (this.state === 'running') {
      if (this.active >= this.opts.concurrency) {
        await new Promise<void>((resolve) => (this.wakeFetcher = resolve));
        this.wakeFetcher = undefined;
        continue;
      }
      const order = this.fetchOrder();
      if (order.length === 0) {
        await this.sleep(this.opts.blockTimeout);
        continue;
      }
      try {
        const fetched = await this.read(order, this.opts.concurrency - this.active);
        failures.ok();
        const givenBack = fetched.filter((f) => this.paused.has(f.queue.name));
        if (givenBack.length > 0) await this.requeueEntries(givenBack); // paused while the read was blocked
        for (const f of fetched) {
          if (this.paused.has(f.queue.name)) continue;
          if (this.active < this.opts.concurrency && this.state === 'running') this.dispatch(f);
          else this.buffer.push(f);
        }
      } catch (err) {
        if (this.state !== 'running') break;
        if (/NOGROUP/.test(errorMessage(err))) {
          this.logger.warn(`Consumer group missing (Redis lost its data?): recreating it (error=${errorMessage(err)})`);
          try {
            await this.ensureGroups();
            continue;
          } catch (e) {
            err = e;
          }
        }
        failures.failed(err);
        await this.sleep(failures.backoffMs);
      }
    }
  }

  /** Queues to try, in order: strict priority, or a weighted random permutation (asynq). Paused ones are left out. */
  private fetchOrder(): QueueState[] {
    const open = this.queues.filter((q) => !this.paused.has(q.name));
    if (this.opts.strictPriority || open.length <= 1) return open;
    const pool = open.slice();
    const order: QueueState[] = [];
    while (pool.length > 0) {
      let r = Math.random() * pool.reduce((s, q) => s + q.weight, 0);
      let i = 0;
      while (i < pool.length - 1 && (r -= pool[i].weight) >= 0) i++;
      order.push(pool.splice(i, 1)[0]);
    }
    return order;
  }

  /**
   * One fetch: with one queue, a blocking read. With several: a non-blocking read per queue in
   * `order` until one has entries; if none has, a blocking read on all of them (which may return
   * more than `count`; the extra entries wait in a local buffer, their claims kept fresh).
   */
  private async read(order: QueueState[], count: number): Promise<Fetched[]> {
    const client = this.blocking!;
    if (order.length > 1) {
      for (const q of order) {
        const got = await this.xreadgroup(client, [q], count, undefined);
        if (got.length > 0) return got;
        if (this.state !== 'running') return [];
      }
    }
    return this.xreadgroup(client, order, count, this.opts.blockTimeout);
  }

  private async xreadgroup(client: RedisClient, queues: QueueState[], count: number, blockMs: number | undefined): Promise<Fetched[]> {
    const args: (string | number)[] = ['GROUP', CONSUMER_GROUP, this.id, 'COUNT', count];
    if (blockMs !== undefined) args.push('BLOCK', blockMs);
    args.push('STREAMS', ...queues.map((q) => q.keys.stream), ...queues.map(() => '>'));
    const reply = (await client.call('XREADGROUP', ...args)) as [string, [string, string[] | null][]][] | null;
    if (!reply) return [];
    const out: Fetched[] = [];
    for (const [key, entries] of reply) {
      const queue = queues.find((q) => q.keys.stream === key)!;
      for (const [entryId, fields] of entries) out.push({ queue, entryId, fields });
    }
    return out;
  }

  /** Creates each queue's consumer group at id 0 (so tasks enqueued before any server are served); BUSYGROUP is fine. */
  private async ensureGroups(): Promise<void> {
    for (const q of this.queues) {
      try {
        await this.conn.client.call('XGROUP', 'CREATE', q.keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
      } catch (err) {
        if (!/BUSYGROUP/.test(errorMessage(err))) throw err;
      }
    }
  }

  private async refreshBlockingId(): Promise<void> {
    try {
      this.blockingId = (await this.blocking!.call('CLIENT', 'ID')) as number;
    } catch {
      this.blockingId = undefined;
    }
  }

  /** Ends a blocking read at once (CLIENT UNBLOCK: the read returns empty, nothing is lost). */
  private async unblock(): Promise<void> {
    if (this.blockingId === undefined) return;
    try {
      await this.conn.client.call('CLIENT', 'UNBLOCK', this.blockingId);
    } catch {
      /* not blocked or Redis gone */
    }
  }

  // ---------------------------------------------------------------- running

  private dispatch(f: Fetched): void {
    const decoded = decodeEntry(f.entryId, f.fields);
    if (!decoded.ok) {
      const { task, error } = decoded;
      this.logger.error(`Undecodable task entry moved to dead (queue=${f.queue.name} entry=${f.entryId} error=${error.message})`);
      const meta: TaskMeta = { ...task.meta, le: error.message, fa: Date.now(), rs: 'decode', raw: decoded.fields };
      void this.kill(f.queue, { ...task, meta }, 'decode', error.message);
      return;
    }
    const reg = this.mux.get(decoded.task.type);
    this.active++;
    const rec: Inflight = { queue: f.queue, task: decoded.task, ctrl: new AbortController(), abandoned: false };
    this.inflight.set(f.entryId, rec);
    if (!reg) {
      void this.noHandler(rec).finally(() => this.finish(rec));
      return;
    }
    void this.run(rec, decoded.payload, reg.fn, reg.options.backoff).finally(() => this.finish(rec));
  }

  private finish(rec: Inflight): void {
    this.inflight.delete(rec.task.entryId);
    this.active--;
    if (this.inflight.size === 0) for (const done of this.idleWaiters) done();
    const next = this.state === 'running' ? this.buffer.shift() : undefined;
    if (next) this.dispatch(next);
    else this.wakeFetcher?.();
  }

  private taskView(rec: Inflight, payload: unknown): Task {
    const { task, queue } = rec;
    return {
      id: task.id,
      type: task.type,
      payload,
      queue: queue.name,
      retried: task.meta.r,
      maxRetry: task.meta.m,
      timeoutMs: task.meta.t,
      signal: rec.ctrl.signal,
      enqueuedAt: task.meta.e,
      schedule: task.meta.s,
      triggerAt: task.meta.tr,
    };
  }

  private async run(rec: Inflight, payload: unknown, fn: (t: Task) => unknown, backoff: BackoffFn | undefined): Promise<void> {
    const { task, queue } = rec;
    const view = this.taskView(rec, payload);
    const startedAt = Date.now();
    if (this.events.active) this.events.emit({ type: 'task.started', queue: queue.name, taskId: task.id, taskType: task.type, retried: task.meta.r });
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = new Promise<unknown>((resolve, reject) => {
        try {
          Promise.resolve(fn(view)).then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
      if (task.meta.t > 0) {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const err = new TaskTimeoutError(task.id, task.meta.t);
            rec.ctrl.abort(err);
            reject(err);
          }, task.meta.t);
        });
        await Promise.race([result, timeout]);
      } else {
        await result;
      }
      if (rec.abandoned) return;
      this.acker.add(queue.keys, task.entryId, task.id, releaseKeys(queue.keys, task));
      if (this.events.active) {
        this.events.emit({ type: 'task.succeeded', queue: queue.name, taskId: task.id, taskType: task.type, retried: task.meta.r, durationMs: Date.now() - startedAt });
      }
    } catch (err) {
      if (rec.abandoned) return;
      await this.failed(rec, view, err, backoff);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async failed(rec: Inflight, view: Task, err: unknown, backoff: BackoffFn | undefined): Promise<void> {
    const { task, queue } = rec;
    const retried = task.meta.r;
    this.failedHere++;
    if (this.events.active) this.events.emit({ type: 'task.failed', queue: queue.name, taskId: task.id, taskType: task.type, retried, error: errorMessage(err) });
    const meta: TaskMeta = { ...task.meta, le: errorText(err), fa: Date.now() };
    if (isNonRetryable(err) || retried >= task.meta.m) {
      const reason = isNonRetryable(err) ? 'non-retryable' : err instanceof TaskTimeoutError ? 'timeout' : 'retries';
      this.logger.error(
        `Task dead (type=${task.type} id=${task.id} queue=${queue.name} retried=${retried}/${task.meta.m} reason=${reason} error=${errorMessage(err)})`,
      );
      await this.kill(queue, { ...task, meta: { ...meta, rs: reason } }, reason, errorMessage(err));
      return;
    }
    let delay: number;
    try {
      delay = (backoff ?? this.opts.backoff)(retried, err, view);
      if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) throw new TypeError(`backoff returned ${String(delay)}`);
    } catch (e) {
      this.logger.warn(`Backoff function failed; using the default (type=${task.type} error=${errorMessage(e)})`);
      delay = defaultBackoff(retried, err, view);
    }
    await this.retryLater(rec, { ...meta, r: retried + 1 }, Math.round(delay), err);
  }

  private async retryLater(rec: Inflight, meta: TaskMeta, delay: number, err: unknown): Promise<void> {
    const { task, queue } = rec;
    try {
      const retryAt = await runScript<number>(
        this.conn.client,
        'retry',
        [queue.keys.stream, queue.keys.retry, queue.keys.tasks, queue.keys.failed(utcDay(Date.now()))],
        [CONSUMER_GROUP, task.entryId, task.id, encodeStored({ ...task, meta }), delay, DEFAULTS.counterTtlMs],
      );
      if (retryAt === 0) {
        this.logger.warn(`Task was reclaimed by another server before its failure was recorded (type=${task.type} id=${task.id})`);
        return;
      }
      this.forwardBy(delay);
      this.logger.warn(
        `Retry scheduled (type=${task.type} id=${task.id} queue=${queue.name} retried=${meta.r}/${meta.m} delayMs=${delay} error=${errorMessage(err)})`,
      );
      if (this.events.active) this.events.emit({ type: 'task.retried', queue: queue.name, taskId: task.id, taskType: task.type, retried: meta.r, retryAt });
    } catch (e) {
      this.logger.error(`Could not schedule a retry; the task stays pending and will be reclaimed (id=${task.id})`, e);
    }
  }

  /** A task of a type this server has no handler for: a few short bounces (another server may have it), then dead. */
  private async noHandler(rec: Inflight): Promise<void> {
    const { task, queue } = rec;
    const error = new HandlerNotFoundError(task.type, task.entryId);
    const meta: TaskMeta = { ...task.meta, le: error.message, fa: Date.now() };
    if (task.meta.r >= Math.min(task.meta.m, NO_HANDLER_BOUNCES)) {
      this.logger.error(`Task dead: ${error.message} (id=${task.id} queue=${queue.name} registered=${this.mux.types().join(',') || 'none'})`);
      await this.kill(queue, { ...task, meta: { ...meta, rs: 'no-handler' } }, 'no-handler', error.message);
      return;
    }
    await this.retryLater(rec, { ...meta, r: task.meta.r + 1 }, 1000 * 2 ** task.meta.r, error);
  }

  private async kill(queue: QueueState, task: StreamTask, reason: string, error: string): Promise<void> {
    try {
      const done = await runScript<number>(
        this.conn.client,
        'kill',
        [queue.keys.stream, queue.keys.dead, queue.keys.deadTasks, queue.keys.failed(utcDay(Date.now())), ...releaseKeys(queue.keys, task)],
        [CONSUMER_GROUP, task.entryId, task.id, encodeStored(task), this.opts.deadMaxCount, this.opts.deadMaxAge, DEFAULTS.counterTtlMs],
      );
      if (done !== 0 && this.events.active) {
        this.events.emit({ type: 'task.dead', queue: queue.name, taskId: task.id, taskType: task.type, retried: task.meta.r, reason, error });
      }
    } catch (e) {
      this.logger.error(`Could not move a task to dead; it stays pending and will be reclaimed (id=${task.id})`, e);
    }
  }

  // ---------------------------------------------------------------- background loops

  /** Moves due delayed and retry tasks into their streams; sleeps until the next due one (by Node timer) or `forwardInterval`. */
  private async forwardLoop(): Promise<void> {
    const failures = this.forwardFailures;
    while (this.state === 'running') {
      let wait = this.opts.forwardInterval;
      try {
        for (const q of this.queues) {
          const [moved, nextDue, now] = await runScript<[number, number, number]>(
            this.conn.client,
            'forward',
            [q.keys.stream, q.keys.scheduled, q.keys.retry, q.keys.tasks],
            [1000],
          );
          if (moved >= 1000) wait = 0;
          else if (nextDue >= 0) wait = Math.min(wait, Math.max(0, nextDue - now));
        }
        failures.ok();
      } catch (err) {
        failures.failed(err);
        wait = failures.backoffMs;
      }
      if (wait > 0) {
        const { done, wake } = this.sleeper(wait);
        this.forwarderWake = { at: Date.now() + wait, wake };
        await done;
        this.forwarderWake = undefined;
      }
    }
  }

  /** A task was scheduled `delayMs` from now: make sure the forwarder is awake by then. */
  private forwardBy(delayMs: number): void {
    const w = this.forwarderWake;
    if (!w || w.at <= Date.now() + delayMs) return;
    w.at = Date.now() + delayMs;
    setTimeout(w.wake, delayMs).unref();
  }

  private async recover(): Promise<void> {
    for (const q of this.queues) {
      let cursor = '0-0';
      for (let round = 0; round < 10; round++) {
        const [, , requeued, dead, next] = await runScript<[number, number, string[], string[], string]>(
          this.conn.client,
          'recover',
          [q.keys.stream, q.keys.dead, q.keys.deadTasks, q.keys.failed(utcDay(Date.now()))],
          [CONSUMER_GROUP, this.id, this.opts.visibilityTimeout, 100, this.opts.maxDeliveries, this.opts.deadMaxCount, this.opts.deadMaxAge, DEFAULTS.counterTtlMs, cursor],
        );
        if (requeued.length > 0) {
          this.logger.warn(`Reclaimed ${requeued.length} task(s) idle past the visibility timeout and put them back in the queue (queue=${q.name} ids=${requeued.join(',')})`);
          if (this.events.active) for (const id of requeued) this.events.emit({ type: 'task.requeued', queue: q.name, taskId: id, taskType: '', reason: 'recovered' });
        }
        for (const id of dead) {
          this.logger.error(`Task dead as poison: reclaimed more than ${this.opts.maxDeliveries} times without finishing (queue=${q.name} id=${id})`);
        }
        cursor = next;
        if (cursor === '0-0') break;
      }
    }
  }

  /** Resets the idle time of every entry this server holds, so a long handler is not reclaimed. */
  private async extendClaims(): Promise<void> {
    const byQueue = new Map<QueueState, string[]>();
    for (const rec of this.inflight.values()) {
      if (!rec.abandoned) byQueue.set(rec.queue, [...(byQueue.get(rec.queue) ?? []), rec.task.entryId]);
    }
    for (const f of this.buffer) byQueue.set(f.queue, [...(byQueue.get(f.queue) ?? []), f.entryId]);
    for (const [q, ids] of byQueue) {
      await this.conn.client.call('XCLAIM', q.keys.stream, CONSUMER_GROUP, this.id, 0, ...ids, 'JUSTID');
    }
  }

  /**
   * Deletes consumers that have been idle for an hour and own no pending entry (servers that are
   * gone: a live server touches its consumer every `blockTimeout`). A consumer that still owns
   * entries is never deleted; the recoverer reclaims those.
   */
  private async deleteGoneConsumers(): Promise<void> {
    for (const q of this.queues) {
      const rows = (await this.conn.client.call('XINFO', 'CONSUMERS', q.keys.stream, CONSUMER_GROUP)) as (string | number)[][];
      for (const row of rows) {
        const info: Record<string, string | number> = {};
        for (let i = 0; i + 1 < row.length; i += 2) info[String(row[i])] = row[i + 1];
        if (info.name !== this.id && Number(info.pending) === 0 && Number(info.idle) > GONE_CONSUMER_IDLE_MS) {
          await this.conn.client.call('XGROUP', 'DELCONSUMER', q.keys.stream, CONSUMER_GROUP, String(info.name));
        }
      }
    }
  }

  private async heartbeat(): Promise<void> {
    const ttl = DEFAULTS.serverHeartbeatMs * 3;
    const info = JSON.stringify({
      id: this.id,
      host: hostname(),
      pid: process.pid,
      queues: Object.fromEntries(this.queues.map((q) => [q.name, q.weight])),
      strictPriority: this.opts.strictPriority,
      concurrency: this.opts.concurrency,
      active: this.active,
      processed: this.processedHere,
      failed: this.failedHere,
      startedAt: this.startedAt,
      heartbeatAt: Date.now(),
    });
    await this.conn.client
      .multi()
      .set(this.globalKeys.server(this.id), info, 'PX', ttl)
      .zadd(this.globalKeys.servers, Date.now() + ttl, this.id)
      .exec();
  }

  private async refreshPaused(): Promise<void> {
    const before = this.paused;
    this.paused = new Set(await this.conn.client.smembers(this.globalKeys.paused));
    if ([...before].some((q) => !this.paused.has(q))) this.wakeFetcher?.();
    // a read blocked on a queue that was just paused must not deliver from it
    if (this.queues.some((q) => this.paused.has(q.name) && !before.has(q.name))) await this.unblock();
  }

  // ---------------------------------------------------------------- shutdown helpers

  private async requeueEntries(items: { queue: QueueState; entryId: string }[]): Promise<void> {
    const byQueue = new Map<QueueState, string[]>();
    for (const i of items) byQueue.set(i.queue, [...(byQueue.get(i.queue) ?? []), i.entryId]);
    for (const [q, ids] of byQueue) {
      try {
        await runScript(this.conn.client, 'requeue', [q.keys.stream], [CONSUMER_GROUP, ...ids]);
      } catch (err) {
        this.logger.error(`Could not put ${ids.length} task(s) back in the queue; they will be reclaimed after the visibility timeout (queue=${q.name})`, err);
      }
    }
  }

  /** Puts back whatever this consumer still has pending (e.g. a read whose reply never arrived), so nothing waits for the visibility timeout. */
  private async releaseOwnPending(): Promise<void> {
    for (const q of this.queues) {
      try {
        const rows = (await this.conn.client.call('XPENDING', q.keys.stream, CONSUMER_GROUP, '-', '+', 1000, this.id)) as [string, string, number, number][];
        if (rows.length > 0) await this.requeueEntries(rows.map(([entryId]) => ({ queue: q, entryId })));
      } catch {
        /* Redis gone: the recoverer of another server reclaims them */
      }
    }
  }

  /** Resolves when no handler runs any more, or after `timeoutMs`. */
  private waitIdle(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(deadline);
        this.idleWaiters.delete(done);
        resolve();
      };
      const deadline = setTimeout(done, timeoutMs);
      this.idleWaiters.add(done);
    });
  }

  private every(ms: number, fn: () => Promise<void>, what: string): void {
    const failures = new FailureLog(this.logger, what);
    let busy = false;
    const t = setInterval(() => {
      if (busy || this.state !== 'running') return;
      busy = true;
      fn()
        .then(() => failures.ok(), (err) => failures.failed(err))
        .finally(() => (busy = false));
    }, ms);
    this.timers.push(t);
  }

  /** Sleeps `ms`; shutdown wakes every sleeper at once. */
  private sleep(ms: number): Promise<void> {
    return this.sleeper(ms).done;
  }

  private sleeper(ms: number): { done: Promise<void>; wake: () => void } {
    let wake!: () => void;
    const done = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(t);
        this.sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
    return { done, wake };
  }
}
