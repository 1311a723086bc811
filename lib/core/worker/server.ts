import { DEFAULTS } from '../runtime/defaults.js';
import { ChronosStateError } from '../runtime/errors.js';
import { EventBus } from '../runtime/events.js';
import { newInstanceId } from '../runtime/instance-id.js';
import { resolveLogger, type ChronosLogger } from '../runtime/logger.js';
import { checkServer, explainFailure, openConnection, type RedisClient } from '../redis/connection.js';
import { closeConnection, ownerClosure, refuseWhenClosed, SERVER_SHUT_DOWN, type ConnectionHandle } from '../redis/owner-close.js';
import { GlobalKeys, QueueKeys } from '../redis/keys.js';
import { AckBatcher } from './ack-batcher.js';
import { Consumer, type ConsumedQueue } from '../fetch/consumer.js';
import { Executor } from './executor.js';
import { Fetcher } from '../fetch/fetcher.js';
import { Forwarder } from '../fetch/forwarder.js';
import { Drain } from './drain.js';
import { Heartbeat, TaskCounters } from './heartbeat.js';
import { Liveness } from '../recovery/liveness.js';
import { Loops } from './loops.js';
import { Mux } from './mux.js';
import { Recoverer } from '../recovery/recoverer.js';
import { QueueSampler } from '../observability/queue-sampler.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { startServices, type Service } from '../runtime/service.js';
import type { Signals } from '../runtime/signals.js';
import { NoticeService, workerServices } from './services.js';
import { Wake } from '../fetch/wake.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerHealth, type ServerOptions } from './server-options.js';
import { Slots } from '../fetch/slots.js';
import { StaleTriggers } from '../recovery/stale.js';
import { SHUTDOWN_REDIS_GRACE_MS, settlesWithin } from '../runtime/shutdown.js';

export { ShutdownAbort } from '../runtime/shutdown.js';
import type { Task } from '../queue/task.js';

export type { ServerOptions, ServerHealth } from './server-options.js';

/** How long a shutdown's Redis work may take beyond `shutdownTimeout`, ms (lib/core/runtime/shutdown.ts). */
export { SHUTDOWN_REDIS_GRACE_MS } from '../runtime/shutdown.js';

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
 * `Heartbeat`, `Liveness`. Each is given the parts of the server's runtime (time, logger, events,
 * test signals) it needs; the constructor wires them top-down (no callback set later). Their
 * background loops are services of one shape (services.ts), which this class starts in order and
 * stops in reverse.
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
  /** Time source, logger, events and test signals, handed to every part. */
  private readonly runtime: Runtime;
  private readonly conn: ConnectionHandle;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping?: Promise<void>;
  private readonly acker: AckBatcher;
  private readonly executor: Executor;
  private readonly consumer: Consumer;
  private readonly loops: Loops;
  private readonly slots: Slots;
  /** Processed and failed tasks since start (counted by the acker and the executor). */
  private readonly counters = new TaskCounters();
  /** Rung when a slot is freed or a queue resumed: the fetch loop waits on it. */
  private readonly fetchWake = new Wake();
  /** The background loops, in start order (stopped in reverse). */
  private readonly services: Service[];
  /** Cancel notices of operators (Inspector `cancelTask`), due-time and pause wakes: subscribed at start, closed after the shutdown drain. */
  private readonly notices: NoticeService;
  private readonly fetcher: Fetcher;
  private readonly forwarder: Forwarder;
  private readonly recoverer: Recoverer;
  private readonly heartbeat: Heartbeat;
  private readonly liveness: Liveness;
  /** Hands back this server's work at its shutdown (drain.ts). */
  private readonly drain: Drain;
  /** True when this server's id was given (`serverId`): a previous process may have left entries under it. */
  private readonly fixedId: boolean;

  static {
    // after the shutdown closed the connection the server opened, pause/resume name themselves (as start() refuses a restart)
    const calls = new Set(['pause', 'resume']);
    refuseWhenClosed(
      ChronosServer.prototype,
      (s) => ownerClosure(s.conn, SERVER_SHUT_DOWN, 'this server'),
      (name) => calls.has(name),
    );
  }

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
    const logger = (this.logger = resolveLogger(options.logger, 'Worker'));
    // the process's time source (fed by the forwarder's round trips) tells when a held trigger task's instant comes
    const runtime = (this.runtime = createRuntime({ logger, events: this.events }));
    const { time, events } = runtime;
    const globalKeys = (this.globalKeys = new GlobalKeys(this.namespace));
    this.conn = openConnection(options.connection);
    const client = this.conn.client;
    const isRunning = () => this.state === 'running';
    const { queues, counters, fetchWake } = this;
    const loops = (this.loops = new Loops());
    const forwardIntervalMs = opts.forwardInterval;
    const forwarder = (this.forwarder = new Forwarder({
      client,
      queues,
      dueKey: globalKeys.due,
      forwardIntervalMs,
      loops,
      isRunning,
      runtime,
    }));
    const acker = (this.acker = new AckBatcher({ client, logger, counterTtlMs: DEFAULTS.counterTtlMs, counters }));
    const consumer = (this.consumer = new Consumer({ client, name: this.id, acks: acker })); // acks and the next read share a socket write
    const executor = (this.executor = new Executor({ client, logger, events, acker, opts, counters, forwarder }));
    const slots = (this.slots = new Slots({
      concurrency: opts.concurrency,
      visibilityTimeoutMs: opts.visibilityTimeout,
      consumer,
      executor,
      mux: this.mux,
      logger,
      isRunning,
      redisNow: () => time.now(),
      exactNow: () => time.exactNow(),
      stale: new StaleTriggers(acker, events, logger),
      slotFreed: fetchWake,
      released: (queue) => this.fetcher.released(queue),
      holdBeyond: () => (this.liveness.alone ? Math.max(0, DEFAULTS.heldAloneMax - opts.concurrency) : 0),
    }));
    const recoverer = (this.recoverer = new Recoverer({ client, queues, consumer, slots, executor, opts, logger, events }));
    const fetcher = (this.fetcher = new Fetcher({
      client,
      globalKeys,
      queues,
      opts,
      consumer,
      slots,
      recoverer,
      loops,
      runtime,
      wake: fetchWake,
      isRunning,
      flushAcks: () => acker.flush(),
      writeAcksOn: (via) => acker.writeOn(via),
    }));
    const config = opts;
    const heartbeat = (this.heartbeat = new Heartbeat({ client, globalKeys, id: this.id, queues, config, counters, slots }));
    const liveness = (this.liveness = new Liveness(client, globalKeys, this.id, opts, logger));
    const sampler = new QueueSampler(client, queues);
    const explain = (err: unknown) => explainFailure(client, err);
    this.services = workerServices({
      runtime,
      opts,
      fetcher,
      fetchWake,
      forwarder,
      recoverer,
      liveness,
      heartbeat,
      sampler,
      isRunning,
      explain,
    });
    this.notices = new NoticeService({ client, namespace: this.namespace, globalKeys, slots, forwarder, fetcher, runtime });
    const { services } = this;
    this.drain = new Drain({
      services,
      recoverer,
      slots,
      acker,
      fetcher,
      liveness,
      heartbeat,
      logger,
      events,
      shutdownTimeoutMs: opts.shutdownTimeout,
    });
  }

  /**
   * The test signals of this server's parts (`fetched`, `forwarded`, `reclaimed`): a test awaits
   * one instead of polling.
   * @internal
   */
  get signals(): Signals {
    return this.runtime.signals;
  }

  /** The Redis client of this server (shared with the app's client when the app passed one in). */
  get redis(): RedisClient {
    return this.conn.client;
  }

  /** Handlers running now. */
  get activeCount(): number {
    return this.slots.activeCount;
  }

  /**
   * True when the shutdown stopped without the rest of its drain: Redis did not answer within
   * `shutdownTimeout` + `SHUTDOWN_REDIS_GRACE_MS`.
   * @internal
   */
  get gaveUpOnRedis(): boolean {
    return this.gaveUp;
  }
  private gaveUp = false;

  /** True while the server runs its loops. */
  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * Health of this server's loops: whether it runs, and for the fetch and forward loops whether
   * they are failing (since when, the last error) — e.g. Redis unreachable.
   */
  health(): ServerHealth {
    const { fetcher } = this;
    const fetch = fetcher.failures.status;
    const blocking = { ready: fetcher.blockingReady };
    return {
      running: this.state === 'running',
      fetch,
      forward: this.forwarder.failures.status,
      lastFetchAt: fetcher.lastFetchAt,
      blocking,
      services: [...this.services, this.notices].map((s) => s.health()),
    };
  }

  /** Names of the queues this server serves. */
  get queueNames(): string[] {
    return this.queues.map((q) => q.name);
  }

  /**
   * Registers a handler (see {@link Mux.handle}); allowed before or after start.
   * @throws DuplicateHandlerError when `type` already has a handler; InvalidOptionsError naming a type
   *   no task can have (empty, over 200 characters, or holding a lone UTF-16 surrogate), a handler that
   *   is not a function or bad `options`.
   */
  handle<T = unknown>(type: string, fn: (task: Task<T>) => unknown, options?: Parameters<Mux['handle']>[2]): this {
    this.mux.handle(type, fn, options);
    return this;
  }

  /**
   * Starts fetching. Checks Redis (reachable, version >= 6.2, its maxmemory-policy) and creates each
   * queue's consumer group. A start that fails closes what it opened (the server is then stopped). A
   * {@link shutdown} during the start ends it after its step in flight: it resolves, the server stopped.
   * @throws ChronosStateError when started twice, or when its `serverId` is in use by a live server
   * (one Redis, Sentinel); RedisUnreachableError, RedisVersionError,
   * RedisEvictionPolicyError (with `requireNoEviction`) from the check.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new ChronosStateError(`Server ${this.id} cannot start: it is ${this.state}`);
    this.state = 'starting';
    const steps: (() => Promise<unknown>)[] = [
      () => checkServer(this.conn.client, { logger: this.logger, requireNoEviction: this.opts.requireNoEviction }),
      async () => this.fixedId && (await this.liveness.refuseIfInUse()),
      () => this.fetcher.open(),
      () => this.consumer.ensureGroups(this.queues),
      () => this.conn.client.sadd(this.globalKeys.queues, ...this.queueNames),
      () => this.fetcher.refreshPaused(),
      () => this.heartbeat.beat(),
      () => this.liveness.open(),
      () => this.notices.start(),
      // the entries a previous process with this id left (it crashed) are nobody else's to reclaim: take them back now
      async () => this.fixedId && (await this.recoverer.reclaimFrom(this.id, "left by this server's previous process (same serverId)")),
    ];
    try {
      // a shutdown during the start ends it after the step in flight (no further connection opened, nothing more written)
      for (let i = 0; i < steps.length && !this.stopping; i++) await steps[i]();
    } catch (err) {
      if (!this.stopping) {
        await this.shutdown();
        throw err;
      }
    }
    if (this.stopping) {
      // shut down while starting: the shutdown closed the connections open then; the step in flight may have opened more
      await this.stopping;
      await this.closeAll();
      return;
    }
    this.state = 'running';
    await startServices(this.services);
    const queues = this.queues.map((q) => `${q.name}:${q.weight}`).join(',');
    const { opts } = this;
    this.logger.log(`Worker started (server=${this.id} queues=${queues} concurrency=${opts.concurrency})`);
  }

  /**
   * Pauses a queue for every server of the namespace (they stop fetching from it at once: a publish
   * on `<ns>:{<ns>:global}:paused:wake`; a server that missed it reads `<ns>:paused` when its subscriber reconnects, and every 30 s).
   * Tasks can still be enqueued. Writes `<ns>:paused`.
   * @throws ChronosStateError after {@link shutdown} closed the connection this server opened.
   */
  pause(queue: string): Promise<void> {
    return this.fetcher.pause(queue);
  }

  /** Queues this server currently knows as paused (read again at each pause or resume, at a reconnect of the subscriber, and every 30 s). */
  get pausedQueues(): ReadonlySet<string> {
    return this.fetcher.paused;
  }

  /** Resumes a paused queue on every server. @throws ChronosStateError after {@link shutdown} closed the connection this server opened. */
  resume(queue: string): Promise<void> {
    return this.fetcher.resume(queue);
  }

  /**
   * Graceful shutdown: stop fetching at once, let in-flight handlers finish for up to
   * `shutdownTimeout` ms, then abort the rest (their signal's reason is a {@link ShutdownAbort})
   * and put their tasks straight back in the queue; close owned connections. Idempotent. It ends
   * within `shutdownTimeout` + 5,000 ms (`SHUTDOWN_REDIS_GRACE_MS`) + the connections' close
   * (≤ 1 s, all at once) even when Redis does not answer: what it could not write then stays pending and is
   * recovered by another server after the visibility timeout.
   */
  shutdown(): Promise<void> {
    if (!this.stopping) this.stopping = this.doShutdown();
    return this.stopping;
  }

  private async doShutdown(): Promise<void> {
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.loops.stop(); // wakes every sleeping loop
    this.fetchWake.wake();
    if (wasRunning) {
      // a Redis that does not answer must not hold the process: each command would wait out ioredis's
      // retries (~10 s) and the drain has several (measured: SIGTERM during an outage returned only when
      // Redis came back, 97 s later). Past the deadline the rest is left to the visibility timeout.
      const deadlineMs = this.opts.shutdownTimeout + SHUTDOWN_REDIS_GRACE_MS;
      if (!(await settlesWithin(this.drain.run(), deadlineMs))) {
        this.gaveUp = true;
        this.drain.leaveUndrained(deadlineMs);
      }
    }
    this.state = 'stopped';
    this.executor.stop();
    this.forwarder.close();
    await this.closeAll();
    const { processed, failed } = this.counters;
    if (wasRunning) this.logger.log(`Worker stopped (server=${this.id} processed=${processed} failed=${failed})`);
  }

  /**
   * Closes every connection at once (each QUIT waits ≤ 1 s for a Redis that does not answer): closing them also ends
   * whatever an abandoned drain still waits on. The liveness connection again, in case the drain did not get there.
   * Idempotent: a start that a shutdown cut short calls it again for what its last step opened.
   */
  private async closeAll(): Promise<void> {
    await Promise.all([this.notices.stop(), this.fetcher.close(), this.liveness.close(false), closeConnection(this.conn)]);
  }
}
