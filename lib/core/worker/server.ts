import { DEFAULTS } from '../runtime/defaults.js';
import { ChronosStateError } from '../runtime/errors.js';
import { EventBus } from '../runtime/events.js';
import { newInstanceId } from '../runtime/instance-id.js';
import { consoleLogger, type ChronosLogger, type FailureLog } from '../runtime/logger.js';
import { engineTime } from '../runtime/time.js';
import { checkServer, closeConnection, openConnection, type ConnectionHandle, type RedisClient } from '../redis/connection.js';
import { GlobalKeys, QueueKeys } from '../redis/keys.js';
import { parseDueWake } from '../redis/commands/due.js';
import { AckBatcher } from './ack-batcher.js';
import { Consumer, type ConsumedQueue } from '../fetch/consumer.js';
import { Executor } from './executor.js';
import { Fetcher } from '../fetch/fetcher.js';
import { Forwarder } from '../fetch/forwarder.js';
import { Heartbeat, RUNNING_SINCE_MAX } from './heartbeat.js';
import { Liveness } from '../recovery/liveness.js';
import { Loops } from './loops.js';
import { Mux } from './mux.js';
import { listenForCancels, type CancelListener } from './cancel-listener.js';
import { Recoverer } from '../recovery/recoverer.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import { Slots } from '../fetch/slots.js';
import { StaleTriggers } from '../recovery/stale.js';
import type { Task } from '../queue/task.js';

export type { ServerOptions } from './server-options.js';

/** Abort reason of handlers still running when the shutdown grace ends. */
export class ShutdownAbort extends Error {
  constructor() {
    super('the server is shutting down; the task was put back in the queue');
    this.name = 'ShutdownAbort';
  }
}

/**
 * A worker server: fetches tasks from its queues with blocking `XREADGROUP` (one consumer group
 * per queue, this server's id as the consumer), runs their handlers with at most `concurrency` at
 * once, acks successes (batched: one script per queue per event-loop turn), retries failures with
 * backoff, dead-letters tasks whose budget is spent, forwards due delayed/retry tasks, and
 * reclaims entries of crashed consumers: at once for a server whose process is gone (its liveness,
 * see `Liveness`), after the visibility timeout for one that is stopped or hung.
 *
 * A schedule trigger's task may arrive before its instant (the leader enqueues up to a second
 * ahead): the server keeps it, with a slot reserved, and starts it at the instant by a Node timer
 * on its estimate of Redis time — so handlers start on time without waking on Redis timeouts.
 *
 * The work is split between rooms that each own their state: `Fetcher` (the fetch loop, the
 * blocking connection, the paused queues), `Slots` (the slot table), `Forwarder` (due
 * delayed/retry tasks, sampling the clock offset), `Recoverer` (the pending entries lists),
 * `Heartbeat` and `Loops` (periodic jobs and sleeps). This class starts and stops them.
 * @publicApi
 */
export class ChronosServer {
  /** This server's id: its consumer name in every queue's consumer group (`serverId` option, else `<hostname>:<pid>:<random>`). */
  readonly id: string;
  /** Key prefix of the app in Redis (`namespace` option, default `chronos`). */
  readonly namespace: string;
  /** The handlers by task type this server runs (the `mux` option, or one of its own to register on). */
  readonly mux: Mux;
  /** The bus `task.*` events are emitted on (the `events` option, or one of its own). */
  readonly events: EventBus;
  private readonly opts: ResolvedServerOptions;
  private readonly queues: ConsumedQueue[];
  private readonly globalKeys: GlobalKeys;
  private readonly logger: ChronosLogger;
  private readonly conn: ConnectionHandle;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping?: Promise<void>;
  private readonly acker: AckBatcher;
  private readonly executor: Executor;
  private readonly consumer: Consumer;
  private readonly loops: Loops;
  private readonly slots: Slots;
  /** Cancel notices of operators (Inspector `cancelTask`), subscribed while running. */
  private cancels?: CancelListener;
  private readonly fetcher: Fetcher;
  private readonly forwarder: Forwarder;
  private readonly recoverer: Recoverer;
  private readonly heartbeat: Heartbeat;
  private readonly liveness: Liveness;
  /** True when this server's id was given (`serverId`): a previous process may have left entries under it. */
  private readonly fixedId: boolean;
  /** Redis time (the process's time source, fed by the forwarder's round trips): when a held trigger task's instant comes. */
  private readonly time = engineTime;

  constructor(options: ServerOptions = {}) {
    const resolved = resolveServerOptions(options);
    const opts = (this.opts = resolved.opts);
    this.namespace = resolved.namespace;
    const { entries, listed } = resolved;
    this.queues = entries.map(([name, weight]) => ({ name, weight, keys: new QueueKeys(this.namespace, name) }));
    if (opts.strictPriority && !listed) this.queues.sort((a, b) => b.weight - a.weight);
    this.id = options.serverId ?? newInstanceId();
    this.fixedId = options.serverId !== undefined;
    this.mux = options.mux ?? new Mux();
    this.events = options.events ?? new EventBus();
    const logger = (this.logger = options.logger ?? consoleLogger('Worker'));
    this.globalKeys = new GlobalKeys(this.namespace);
    this.conn = openConnection(options.connection);
    const client = this.conn.client;
    const isRunning = () => this.state === 'running';
    this.loops = new Loops(logger, isRunning);
    const due = this.globalKeys.due;
    this.forwarder = new Forwarder(client, this.queues, due, opts.forwardInterval, this.loops, isRunning, logger, this.time);
    this.acker = new AckBatcher(client, logger, DEFAULTS.counterTtlMs, (n) => (this.executor.processed += n));
    this.consumer = new Consumer(client, this.id);
    this.consumer.beforeRead = (via) => this.acker.writeOn(via); // acks and the next read share a socket write
    this.executor = new Executor(client, logger, this.events, this.acker, opts, (delay, q, at) => this.forwarder.forwardBy(delay, q, at));
    this.slots = new Slots({
      concurrency: opts.concurrency,
      visibilityTimeoutMs: opts.visibilityTimeout,
      consumer: this.consumer,
      executor: this.executor,
      mux: this.mux,
      logger,
      isRunning,
      redisNow: () => this.time.now(),
      stale: new StaleTriggers(this.acker, this.events, logger),
      slotFreed: () => this.fetcher.wake(),
    });
    const { queues, consumer, slots, executor, events } = this;
    this.recoverer = new Recoverer({ client, queues, consumer, slots, executor, opts, logger, events });
    const { globalKeys, recoverer, loops } = this;
    this.fetcher = new Fetcher({ client, globalKeys, queues, opts, consumer, slots, recoverer, loops, logger, isRunning });
    this.heartbeat = new Heartbeat(client, globalKeys, this.id, queues, opts, () => ({
      active: this.slots.activeCount,
      processed: this.executor.processed,
      failed: this.executor.failed,
      runningSince: Object.fromEntries(this.slots.running.slice(0, RUNNING_SINCE_MAX).map((r) => [r.id, r.startedAt])),
    }));
    this.liveness = new Liveness(client, globalKeys, this.id, opts, logger);
  }

  /** The Redis client of this server (shared with the app's client when the app passed one in). */
  get redis(): RedisClient {
    return this.conn.client;
  }

  /** Handlers running now. */
  get activeCount(): number {
    return this.slots.activeCount;
  }

  /** True while the server runs its loops. */
  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * Health of this server's loops: whether it runs, and for the fetch and forward loops whether
   * they are failing (since when, the last error) — e.g. Redis unreachable.
   */
  health(): {
    /** True while the server runs its loops (started and not stopping). */
    running: boolean;
    /** The fetch loop (blocking `XREADGROUP` on the queues). */
    fetch: FailureLog['status'];
    /** The forward loop (moves due delayed and retry tasks into their streams). */
    forward: FailureLog['status'];
    /** When a fetch read last answered (epoch ms, local clock; a blocking read answers at least every `blockTimeout`). */
    lastFetchAt?: number;
    /** The blocking connection the fetch reads use. */
    blocking: {
      /** Connected and ready. */
      ready: boolean;
    };
  } {
    const { fetcher } = this;
    const fetch = fetcher.failures.status;
    const blocking = { ready: fetcher.blockingReady };
    return {
      running: this.state === 'running',
      fetch,
      forward: this.forwarder.failures.status,
      lastFetchAt: fetcher.lastFetchAt,
      blocking,
    };
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
   * Starts fetching. Checks Redis (reachable, version >= 6.2, its maxmemory-policy) and creates each
   * queue's consumer group. A start that fails closes what it opened (the server is then stopped).
   * @throws ChronosStateError when started twice; RedisUnreachableError, RedisVersionError,
   * RedisEvictionPolicyError (with `requireNoEviction`) from the check.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new ChronosStateError(`Server ${this.id} cannot start: it is ${this.state}`);
    this.state = 'starting';
    try {
      await checkServer(this.conn.client, { logger: this.logger, requireNoEviction: this.opts.requireNoEviction });
      await this.fetcher.open();
      await this.consumer.ensureGroups(this.queues);
      await this.conn.client.sadd(this.globalKeys.queues, ...this.queueNames);
      await this.fetcher.refreshPaused();
      await this.heartbeat.beat();
      await this.liveness.open();
      await this.listen();
      // the entries a previous process with this id left (it crashed) are nobody else's to reclaim: take them back now
      if (this.fixedId) await this.recoverer.reclaimFrom(this.id, "left by this server's previous process (same serverId)");
    } catch (err) {
      await this.shutdown();
      throw err;
    }
    if (this.state !== 'starting') return; // shut down while starting
    this.state = 'running';
    const { loops, recoverer, opts, liveness, heartbeat } = this;
    loops.start(this.fetcher.run());
    loops.start(this.forwarder.run());
    let sweepAll = true;
    loops.every(
      DEFAULTS.livenessCheckMs,
      async () => {
        const view = await liveness.tick();
        sweepAll = view.sweepAll;
        for (const id of view.dead) {
          await recoverer.reclaimFrom(id, `from server ${id}, whose process is gone`);
          liveness.handled(id);
          await heartbeat.forget(id);
        }
      },
      'Checking the liveness of worker servers',
    );
    loops.every(opts.recoverInterval, () => recoverer.recover(sweepAll), 'Recovering idle tasks');
    loops.every(Math.max(100, Math.floor(opts.visibilityTimeout / 3)), () => recoverer.extendClaims(), 'Extending claims');
    loops.every(DEFAULTS.serverHeartbeatMs, () => this.heartbeat.beat(), 'Server heartbeat');
    loops.every(DEFAULTS.pausedPollMs, () => this.fetcher.refreshPaused(), 'Reading paused queues');
    loops.every(5 * 60_000, () => recoverer.deleteGoneConsumers(), 'Deleting consumers of gone servers');
    const queues = this.queues.map((q) => `${q.name}:${q.weight}`).join(',');
    this.logger.log(`Worker started (server=${this.id} queues=${queues} concurrency=${opts.concurrency})`);
  }

  /**
   * Subscribes (one connection) to operators' cancel notices, to the due-time wakes of the forwarder
   * (before its first round: a due time lowered after that round's claim is heard), and to pause
   * changes (the paused set is read again at once).
   */
  private async listen(): Promise<void> {
    const forwarder = this.forwarder;
    const wakes = {
      channel: this.globalKeys.dueWake,
      onMessage: (text: string) => {
        const w = parseDueWake(text);
        if (w) forwarder.dueAt(w.queue, w.dueAt);
      },
      onResubscribed: () => forwarder.wake(),
    };
    const refreshPaused = () => void this.fetcher.refreshPaused().catch(() => {}); // the fallback read retries
    const pauses = { channel: this.globalKeys.pausedWake, onMessage: refreshPaused, onResubscribed: refreshPaused };
    this.cancels = await listenForCancels(
      this.conn.client,
      this.namespace,
      (entryId, queue) => this.slots.cancelled(queue, entryId),
      this.logger,
      (run, actor) => {
        if (this.events.active) this.events.emit({ type: 'task.cancelled', queue: run.queue, taskId: run.id, taskType: run.type, actor });
      },
      [wakes, pauses],
    );
  }

  /**
   * Pauses a queue for every server of the namespace (they stop fetching from it at once: a publish
   * on `<ns>:{<ns>:global}:paused:wake`; a server that missed it reads `<ns>:paused` every 10 s).
   * Tasks can still be enqueued. Writes `<ns>:paused`.
   */
  pause(queue: string): Promise<void> {
    return this.fetcher.pause(queue);
  }

  /** Queues this server currently knows as paused (read again at each pause or resume, and every 10 s). */
  get pausedQueues(): ReadonlySet<string> {
    return this.fetcher.paused;
  }

  /** Resumes a paused queue on every server. */
  resume(queue: string): Promise<void> {
    return this.fetcher.resume(queue);
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
    this.loops.stop();
    this.fetcher.wake();
    if (wasRunning) {
      // a read sent just after an UNBLOCK would still block: repeat until the loops have ended
      const loopsDone = this.loops.ended();
      let ended = false;
      void loopsDone.then(() => (ended = true));
      while (!ended) {
        await this.fetcher.unblock();
        await Promise.race([loopsDone, new Promise((r) => setTimeout(r, 50))]);
      }
      // entries fetched but not started (waiting for a slot, or held for their instant) go straight back
      await this.recoverer.giveBack(this.slots.takeUnstarted().map((w) => ({ queue: w.queue, entryId: w.task.entryId, task: w.task })));
      await this.abortRunning();
      await this.acker.flush();
      this.acker.stop();
      await this.recoverer.releaseOwnPending();
      await this.liveness.close();
      await this.heartbeat.remove();
    } else await this.liveness.close(false);
    this.state = 'stopped';
    this.executor.stop();
    await this.cancels?.close();
    await this.fetcher.close();
    await closeConnection(this.conn);
    const { processed, failed } = this.executor;
    if (wasRunning) this.logger.log(`Worker stopped (server=${this.id} processed=${processed} failed=${failed})`);
  }

  /** Waits up to `shutdownTimeout` ms for running handlers, then aborts the rest and puts their tasks back. */
  private async abortRunning(): Promise<void> {
    const running = this.slots.running.length;
    if (running > 0) {
      this.logger.log(`Waiting for ${running} running task(s) (up to ${this.opts.shutdownTimeout} ms)`);
      await this.slots.waitIdle(this.opts.shutdownTimeout);
    }
    const left = this.slots.running;
    if (left.length === 0) return;
    for (const run of left) {
      run.abandoned = true;
      run.abort(new ShutdownAbort());
    }
    await this.recoverer.giveBack(left.map((r) => ({ queue: r.ref as ConsumedQueue, entryId: r.entry.entryId, task: r.entry })));
    const ids = left.map((r) => r.id).join(',');
    this.logger.warn(`Shutdown grace over: ${left.length} task(s) aborted and put back in the queue (ids=${ids})`);
    for (const { queue, id: taskId, type: taskType } of left) {
      if (this.events.active) this.events.emit({ type: 'task.requeued', queue, taskId, taskType, reason: 'shutdown' });
    }
  }
}
