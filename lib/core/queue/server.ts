import { hostname } from 'node:os';
import { DEFAULTS } from '../defaults.js';
import { ChronosStateError } from '../errors.js';
import { EventBus } from '../events.js';
import { newInstanceId } from '../instance-id.js';
import { consoleLogger, FailureLog, type ChronosLogger } from '../logger.js';
import {
  checkServer,
  closeClient,
  closeConnection,
  duplicateConnection,
  openConnection,
  type ConnectionHandle,
  type RedisClient,
} from '../redis/connection.js';
import { GlobalKeys, QueueKeys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { AckBatcher } from './ack-batcher.js';
import { decodeEntry, type StreamTask, type TaskMeta } from './codec.js';
import { Consumer, weightedOrder, type ConsumedQueue, type Fetched as ConsumedFetched } from './consumer.js';
import { errorMessage, Executor, TaskRun } from './executor.js';
import { Mux } from './mux.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import type { Task } from './task.js';

export type { ServerOptions } from './server-options.js';

/** Abort reason of handlers still running when the shutdown grace ends. */
export class ShutdownAbort extends Error {
  constructor() {
    super('the server is shutting down; the task was put back in the queue');
    this.name = 'ShutdownAbort';
  }
}

type QueueState = ConsumedQueue;

type Fetched = ConsumedFetched<QueueState>;

/** A decoded task waiting for a slot (fetched beyond the free slots by a multi-queue read). */
interface Waiting {
  readonly queue: QueueState;
  readonly task: StreamTask;
  readonly payload: unknown;
}

/** A schedule trigger's task fetched before its instant, held until then with a slot reserved. */
interface Held extends Waiting {
  readonly timer: NodeJS.Timeout;
  /** When the timer should fire (local clock, epoch ms). */
  readonly dueAt: number;
}

/**
 * A worker server: fetches tasks from its queues with blocking `XREADGROUP` (one consumer group
 * per queue, this server's id as the consumer), runs their handlers with at most `concurrency` at
 * once, acks successes (batched: one script per queue per event-loop turn), retries failures with
 * backoff, dead-letters tasks whose budget is spent, forwards due delayed/retry tasks, and
 * reclaims entries of crashed consumers.
 *
 * A schedule trigger's task may arrive before its instant (the leader enqueues up to a second
 * ahead): the server keeps it, with a slot reserved, and starts it at the instant by a Node timer
 * on its estimate of Redis time — so handlers start on time without waking on Redis timeouts.
 * @publicApi
 */
export class ChronosServer {
  readonly id: string;
  readonly namespace: string;
  readonly mux: Mux;
  readonly events: EventBus;
  private readonly opts: ResolvedServerOptions;
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
  private readonly inflight = new Map<string, TaskRun>();
  private readonly buffer: Waiting[] = [];
  private readonly held = new Map<string, Held>();
  /** Redis time − local clock, ms (from the forwarder's replies). */
  private clockOffsetMs = 0;
  private readonly acker: AckBatcher;
  private readonly executor: Executor;
  private readonly consumer: Consumer;
  private wakeFetcher?: () => void;
  private loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  /** When the forwarder wakes next (epoch ms, local clock), and how to wake it sooner. */
  private forwarderWake?: { at: number; wake: () => void };
  private readonly idleWaiters = new Set<() => void>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly startedAt = Date.now();
  private readonly fetchFailures: FailureLog;
  private readonly forwardFailures: FailureLog;

  constructor(options: ServerOptions = {}) {
    const resolved = resolveServerOptions(options);
    this.opts = resolved.opts;
    this.namespace = resolved.namespace;
    const { entries, listed } = resolved;
    this.queues = entries.map(([name, weight]) => ({ name, weight, keys: new QueueKeys(this.namespace, name) }));
    if (this.opts.strictPriority && !listed) this.queues.sort((a, b) => b.weight - a.weight);
    this.id = options.serverId ?? newInstanceId();
    this.mux = options.mux ?? new Mux();
    this.events = options.events ?? new EventBus();
    this.logger = options.logger ?? consoleLogger('Worker');
    this.globalKeys = new GlobalKeys(this.namespace);
    this.conn = openConnection(options.connection);
    this.fetchFailures = new FailureLog(this.logger, 'Fetching tasks');
    this.forwardFailures = new FailureLog(this.logger, 'Forwarding due tasks');
    this.acker = new AckBatcher(this.conn.client, this.logger, DEFAULTS.counterTtlMs, (n) => (this.executor.processed += n));
    this.consumer = new Consumer(this.conn.client, this.id);
    this.executor = new Executor(this.conn.client, this.logger, this.events, this.acker, this.opts, (delay) => this.forwardBy(delay));
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
    await this.refreshBlockingId();
    await this.consumer.ensureGroups(this.queues);
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
      // entries fetched but not started (waiting for a slot, or held for their instant) go straight back
      for (const h of this.held.values()) clearTimeout(h.timer);
      const unstarted = [...this.buffer.splice(0), ...this.held.values()];
      this.held.clear();
      await this.requeueEntries(unstarted.map((w) => ({ queue: w.queue, entryId: w.task.entryId })));
      if (this.inflight.size > 0) {
        this.logger.log(`Waiting for ${this.inflight.size} running task(s) (up to ${this.opts.shutdownTimeout} ms)`);
        await this.waitIdle(this.opts.shutdownTimeout);
      }
      const left = [...this.inflight.values()];
      if (left.length > 0) {
        for (const run of left) {
          run.abandoned = true;
          run.abort(new ShutdownAbort());
        }
        await this.requeueEntries(left.map((r) => ({ queue: r.ref as QueueState, entryId: r.entry.entryId })));
        this.logger.warn(`Shutdown grace over: ${left.length} task(s) aborted and put back in the queue (ids=${left.map((r) => r.id).join(',')})`);
        for (const run of left) {
          if (this.events.active) this.events.emit({ type: 'task.requeued', queue: run.queue, taskId: run.id, taskType: run.type, reason: 'shutdown' });
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
    this.executor.stop();
    if (this.blocking) await closeClient(this.blocking);
    await closeConnection(this.conn);
    if (wasRunning) this.logger.log(`Worker stopped (server=${this.id} processed=${this.executor.processed} failed=${this.executor.failed})`);
  }

  // ---------------------------------------------------------------- fetching

  private async fetchLoop(): Promise<void> {
    const failures = this.fetchFailures;
    while (this.state === 'running') {
      if (this.freeSlots <= 0) {
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
        const sentAt = Date.now();
        let fetched = await this.read(order, this.freeSlots);
        failures.ok();
        // a reply far later than a blocking read can take means this process was paused while the
        // entries waited in its socket: the recoverer may have given them to someone else already
        if (fetched.length > 0 && Date.now() - sentAt > this.opts.blockTimeout + this.opts.visibilityTimeout / 3) {
          fetched = await this.stillOwned(fetched);
        }
        const givenBack = fetched.filter((f) => this.paused.has(f.queue.name));
        if (givenBack.length > 0) await this.requeueEntries(givenBack); // paused while the read was blocked
        for (const f of fetched) if (!this.paused.has(f.queue.name)) this.accept(f);
      } catch (err) {
        if (this.state !== 'running') break;
        if (/NOGROUP/.test(errorMessage(err))) {
          this.logger.warn(`Consumer group missing (Redis lost its data?): recreating it (error=${errorMessage(err)})`);
          try {
            await this.consumer.ensureGroups(this.queues);
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

  /** The entries this consumer still owns (`XCLAIM … JUSTID` per queue); the others were reclaimed. */
  private async stillOwned(fetched: Fetched[]): Promise<Fetched[]> {
    const owned = new Set<string>();
    for (const q of new Set(fetched.map((f) => f.queue))) {
      const ids = fetched.filter((f) => f.queue === q).map((f) => f.entryId);
      for (const id of await this.consumer.claim(q.keys.stream, ids)) owned.add(id);
    }
    const lost = fetched.length - owned.size;
    if (lost > 0) this.logger.warn(`${lost} fetched task(s) were reclaimed while this process was paused; not running them here`);
    return fetched.filter((f) => owned.has(f.entryId));
  }

  /** Queues to try, in order: strict priority, or a weighted random permutation (asynq). Paused ones are left out. */
  private fetchOrder(): QueueState[] {
    const open = this.queues.filter((q) => !this.paused.has(q.name));
    return this.opts.strictPriority || open.length <= 1 ? open : weightedOrder(open);
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
        const got = await this.consumer.read(client, [q], count);
        if (got.length > 0) return got;
        if (this.state !== 'running') return [];
      }
    }
    return this.consumer.read(client, order, count, this.opts.blockTimeout);
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

  /** Slots neither running a handler nor reserved by a held task. */
  private get freeSlots(): number {
    return this.opts.concurrency - this.active - this.held.size;
  }

  /** Decodes a fetched entry: garbage goes to dead at once; a task starts, is held, or waits for a slot. */
  private accept(f: Fetched): void {
    const decoded = decodeEntry(f.entryId, f.fields);
    if (!decoded.ok) {
      const { task, error } = decoded;
      this.logger.error(`Undecodable task entry moved to dead (queue=${f.queue.name} entry=${f.entryId} error=${error.message})`);
      const meta: TaskMeta = { ...task.meta, le: error.message, fa: Date.now(), rs: 'decode', raw: decoded.fields };
      void this.executor.kill(f.queue, { ...task, meta }, 'decode', error.message);
      return;
    }
    const w: Waiting = { queue: f.queue, task: decoded.task, payload: decoded.payload };
    if (this.freeSlots > 0 && this.state === 'running') this.admit(w);
    else this.buffer.push(w);
  }

  /** Takes a slot: holds a trigger's task that is early (first attempt only), else starts it. */
  private admit(w: Waiting): void {
    const { tr, r, c } = w.task.meta;
    const early = tr !== undefined && r === 0 && !c ? tr - (Date.now() + this.clockOffsetMs) : 0;
    if (early > 0) {
      // +1 ms: a Node timer may fire up to 1 ms before its delay (whole-ms rounding)
      const delay = Math.ceil(early) + 1;
      const timer = setTimeout(() => void this.release(w.task.entryId), delay);
      this.held.set(w.task.entryId, { ...w, timer, dueAt: Date.now() + delay });
      return;
    }
    this.run(w);
  }

  /**
   * A held task's instant has come: it starts in its reserved slot. When the timer fires much
   * later than planned (the process was paused or its event loop blocked, so claims were not
   * extended), the entry may have been reclaimed and run elsewhere: it starts only if this
   * consumer still owns it (`XCLAIM … JUSTID` returns it).
   */
  private async release(entryId: string): Promise<void> {
    const h = this.held.get(entryId);
    if (!h || this.state !== 'running') return;
    if (Date.now() - h.dueAt > this.opts.visibilityTimeout / 3) {
      let owned = false;
      try {
        owned = (await this.consumer.claim(h.queue.keys.stream, [entryId])).length === 1;
      } catch (err) {
        this.logger.warn(`Could not confirm a held task is still ours; leaving it to the recoverer (id=${h.task.id} error=${errorMessage(err)})`);
      }
      if (this.held.get(entryId) !== h || this.state !== 'running') return;
      if (!owned) {
        this.held.delete(entryId);
        this.logger.warn(`A held task was reclaimed while this process was paused; not running it here (id=${h.task.id})`);
        this.finishReserved();
        return;
      }
    }
    this.held.delete(entryId);
    this.run(h);
  }

  /** A reserved slot was given up without running: let waiting tasks or the fetcher use it. */
  private finishReserved(): void {
    while (this.state === 'running' && this.freeSlots > 0 && this.buffer.length > 0) this.admit(this.buffer.shift()!);
    this.wakeFetcher?.();
  }

  private run(w: Waiting): void {
    const run = new TaskRun(w.queue, w.task, w.payload);
    this.active++;
    this.inflight.set(w.task.entryId, run);
    const reg = this.mux.get(w.task.type);
    if (!reg) {
      void this.executor.noHandler(run, this.mux.types()).finally(() => this.finish(run));
      return;
    }
    this.executor.execute(run, reg, () => this.finish(run));
  }

  private finish(run: TaskRun): void {
    this.inflight.delete(run.entry.entryId);
    this.active--;
    if (this.inflight.size === 0) for (const done of this.idleWaiters) done();
    this.finishReserved();
  }

  // ---------------------------------------------------------------- background loops

  /** Moves due delayed and retry tasks into their streams; sleeps until the next due one (by Node timer) or `forwardInterval`. */
  private async forwardLoop(): Promise<void> {
    const failures = this.forwardFailures;
    while (this.state === 'running') {
      let wait = this.opts.forwardInterval;
      try {
        for (const q of this.queues) {
          const sent = Date.now();
          const [moved, nextDue, now] = await runScript<[number, number, number]>(
            this.conn.client,
            'forward',
            [q.keys.stream, q.keys.scheduled, q.keys.retry, q.keys.tasks],
            [1000],
          );
          this.clockOffsetMs = now - (sent + Date.now()) / 2;
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
    const o = this.opts;
    for (const q of this.queues) {
      const { requeued, dead } = await this.consumer.recover(q.keys, {
        visibilityTimeoutMs: o.visibilityTimeout,
        maxDeliveries: o.maxDeliveries,
        deadMaxCount: o.deadMaxCount,
        deadMaxAgeMs: o.deadMaxAge,
      });
      if (requeued.length > 0) {
        this.logger.warn(`Reclaimed ${requeued.length} task(s) idle past the visibility timeout and put them back in the queue (queue=${q.name} ids=${requeued.join(',')})`);
        if (this.events.active) for (const id of requeued) this.events.emit({ type: 'task.requeued', queue: q.name, taskId: id, taskType: '', reason: 'recovered' });
      }
      for (const id of dead) this.logger.error(`Task dead as poison: reclaimed more than ${o.maxDeliveries} times without finishing (queue=${q.name} id=${id})`);
    }
  }

  /** Resets the idle time of every entry this server holds, so a long handler is not reclaimed. */
  private async extendClaims(): Promise<void> {
    const byQueue = new Map<QueueState, string[]>();
    const add = (queue: QueueState, entryId: string) => byQueue.set(queue, [...(byQueue.get(queue) ?? []), entryId]);
    for (const run of this.inflight.values()) if (!run.abandoned) add(run.ref as QueueState, run.entry.entryId);
    for (const w of [...this.buffer, ...this.held.values()]) add(w.queue, w.task.entryId);
    for (const [q, ids] of byQueue) await this.consumer.claim(q.keys.stream, ids);
  }

  private async deleteGoneConsumers(): Promise<void> {
    for (const q of this.queues) await this.consumer.deleteGoneConsumers(q.keys.stream);
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
      processed: this.executor.processed,
      failed: this.executor.failed,
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
        await this.consumer.giveBack(q.keys.stream, ids);
      } catch (err) {
        this.logger.error(`Could not put ${ids.length} task(s) back in the queue; they will be reclaimed after the visibility timeout (queue=${q.name})`, err);
      }
    }
  }

  /** Puts back whatever this consumer still has pending (e.g. a read whose reply never arrived), so nothing waits for the visibility timeout. */
  private async releaseOwnPending(): Promise<void> {
    for (const q of this.queues) {
      try {
        const ids = await this.consumer.pending(q.keys.stream);
        if (ids.length > 0) await this.requeueEntries(ids.map((entryId) => ({ queue: q, entryId })));
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
