import { systemClock, type Clock } from '../runtime/clock.js';
import { ChronosStateError } from '../runtime/errors.js';
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger, FailureLog } from '../runtime/logger.js';
import { checkServer, closeConnection, openConnection, type ConnectionHandle } from '../redis/connection.js';
import { SchedulerKeys } from '../redis/keys.js';
import { SHARD_COUNT } from '../redis/protocol.js';
import { engineTime } from '../runtime/time.js';
import { toStored, type ScheduleDefinition, type StoredSchedule } from './definition.js';
import { Firing } from './firing.js';
import { migrateLegacyRegistry } from './migrate.js';
import { ShardLeases } from '../leadership/shards.js';
import { Declarations } from './registry.js';
import { InspectorContext } from '../admin/context.js';
import { resolveSchedulerOptions, type SchedulerOptions } from './scheduler-options.js';
import { testHooksOf } from './test-hooks.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { haltServices, stopServices, type Service, type ServiceHealth } from '../runtime/service.js';
import { SHUTDOWN_REDIS_GRACE_MS, settlesWithin } from '../runtime/shutdown.js';
import type { Signals } from '../runtime/signals.js';
import { FiringService, HeartbeatService, LeaseService, NoticeService } from './services.js';
import { ScheduleWrites } from './schedule-writes.js';

export type { SchedulerOptions } from './scheduler-options.js';

/**
 * The leader-elected scheduler. Every instance runs one: it publishes the schedules it declares,
 * campaigns for shard leases, and — for each of the 16 shards it leads (docs/scheduler-shards.md:
 * the fleet's instances share them fairly) — enqueues every trigger of every live schedule of the
 * shard exactly once, fleet-wide: each trigger goes through `fire.lua` (dedup key
 * `<schedule>:<trigger-unix>` SET NX + enqueue + lastFired, atomic, refused if not due by Redis
 * time). A shard's new leader fires every trigger in (lastFired, now] under the catch-up policy,
 * which decides about any gap (plan.ts); registry changes mark the schedule in its shard's due
 * index, reach the shard's leader by a notice, and are fenced in the queue's slot (registry.ts).
 *
 * The pieces, each owning its state: the shard leases (leadership/shards.ts), this instance's
 * declarations and heartbeat (registry.ts), the shards' firing loops (firing.ts, shard-loop.ts,
 * planning in plan.ts; no table of schedules: a bounded batch of a shard's due index at a time),
 * and the estimate of Redis time (lib/core/runtime/time.ts: the process's one time source, shared
 * with the worker). Its background loops are services of one shape (services.ts: notices, leases,
 * firing, heartbeat), started in order and stopped in reverse.
 * @publicApi
 */
export class Scheduler extends ScheduleWrites {
  /** Id of this instance: the lease holder's name (`instanceId` option, else `<hostname>:<pid>:<random>`). */
  readonly instanceId: string;
  /** Key prefix of the app in Redis (`namespace` option, default `chronos`). */
  readonly namespace: string;
  /** The bus `schedule.*` and `leader.*` events are emitted on (the `events` option, or one of its own). */
  readonly events: EventBus;
  private readonly keys: SchedulerKeys;
  /** @internal */
  protected readonly conn: ConnectionHandle;
  private readonly logger: ChronosLogger;
  /** A test's fake clock (test-hooks.ts): it decides what is due instead of Redis time. */
  private readonly clock: Clock;
  private readonly trustLocalClock: boolean;
  private readonly leaderTtlMs: number;
  private readonly eligible: boolean;
  /** @internal */
  protected readonly timeZone: string;
  private readonly requireNoEviction: boolean;
  private readonly time = engineTime;
  /** Time source, logger, events and test signals, handed to the parts. */
  private readonly runtime: Runtime;
  /** The background loops, in start order (stopped in reverse). */
  private readonly services: Service[];
  /** The notice subscriber (eligible instances only): its connection is closed at the stop whatever the other services do. */
  private readonly notices?: NoticeService;
  private readonly declarations: Declarations;
  private readonly firing: Firing;
  private readonly leases: ShardLeases;
  /** The operator's acts of the runtime API (lib/core/admin/schedule-acts.ts), on this scheduler's connection and bus. @internal */
  protected readonly admin: InspectorContext;
  private state: 'new' | 'running' | 'stopped' = 'new';

  /** @throws InvalidOptionsError listing every bad option (see {@link SchedulerOptions}). */
  constructor(options: SchedulerOptions = {}) {
    super();
    const o = resolveSchedulerOptions(options);
    const hooks = testHooksOf(options);
    this.namespace = o.namespace;
    this.leaderTtlMs = o.leaderTtlMs;
    this.timeZone = o.timeZone;
    this.requireNoEviction = o.requireNoEviction;
    this.instanceId = o.instanceId;
    this.eligible = o.eligible;
    this.events = o.events;
    this.logger = o.logger;
    this.runtime = createRuntime({ logger: o.logger, events: o.events, time: this.time });
    this.clock = hooks.clock ?? systemClock;
    this.trustLocalClock = hooks.clock !== undefined;
    this.keys = new SchedulerKeys(this.namespace);
    this.conn = openConnection(o.connection);
    const shared = { client: this.conn.client, keys: this.keys, namespace: this.namespace, instanceId: this.instanceId };
    // an instance is live while seen within 3 heartbeats (the removal guard reads it); acts are by `app:<instanceId>`
    this.admin = new InspectorContext(
      this.conn.client,
      this.namespace,
      o.heartbeatMs * 3,
      `app:${this.instanceId}`,
      this.events,
      o.compactSchedules,
      o.maxPayloadBytes,
    );
    this.declarations = new Declarations({
      ...shared,
      heartbeatMs: o.heartbeatMs,
      logger: this.logger,
      now: () => this.now(),
      trustedLocalNow: () => (this.trustLocalClock ? this.clock.now() : undefined),
      beat: () => this.firing.refreshLiveness(),
      compactSchedules: o.compactSchedules,
    });
    this.firing = new Firing({
      ...shared,
      logger: this.logger,
      events: this.events,
      trustLocalClock: this.trustLocalClock,
      time: this.time,
      now: () => this.now(),
      leads: (shard) => this.leases.check(shard),
      leaseEnd: (shard) => this.leases.leaseEnd(shard),
      running: () => this.state === 'running',
      declarations: this.declarations,
      historyLimit: o.historyLimit,
      signals: this.runtime.signals,
    });
    this.leases = new ShardLeases({
      client: this.conn.client,
      keys: this.keys,
      instanceId: this.instanceId,
      ttlMs: this.leaderTtlMs,
      shardCount: SHARD_COUNT,
      logger: this.logger,
      listener: {
        acquired: (taken) => this.firing.acquired(taken),
        lost: (shards, reason) => this.firing.lost(shards, reason),
        clockSample: (sentAt, redisNow, receivedAt) => this.time.sample(sentAt, redisNow, receivedAt),
      },
      localNow: () => this.time.localNow(),
    });
    const { client } = this.conn;
    const { keys, firing, leases, declarations } = this;
    const migrate = () => this.migrate();
    this.notices = this.eligible ? new NoticeService({ client, keys, firing, leases, migrate }) : undefined;
    const leader = this.notices ? [this.notices, new LeaseService({ leases })] : [];
    this.services = [...leader, new FiringService({ firing }), new HeartbeatService({ client, declarations })];
  }

  /**
   * The test signals of this scheduler's parts (`tick.start`, `tick.done`): a test awaits one
   * instead of polling, or runs code at that moment.
   * @internal
   */
  get signals(): Signals {
    return this.runtime.signals;
  }

  /** True while this instance leads at least one shard (holds its lease by its own clock). */
  get isLeader(): boolean {
    return this.firing.leading && this.leases.isLeader;
  }

  /** The shards this instance leads now (0 to 15, ascending; docs/scheduler-shards.md). */
  get shards(): number[] {
    return this.firing.shards.filter((k) => this.leases.held.has(k));
  }

  /** Fencing term of this instance's newest shard leadership (0 if it never led one). */
  get term(): number {
    let term = this.lastTerm;
    for (const t of this.leases.held.values()) term = Math.max(term, t);
    return (this.lastTerm = term);
  }
  private lastTerm = 0;

  /**
   * Health of this scheduler: whether it runs, leads (and its term), and whether its heartbeat
   * and firing loop are failing (since when, the last error).
   */
  health(): {
    /** True between `start()` and `stop()`. */
    running: boolean;
    /** True while this instance leads at least one shard (see {@link Scheduler.isLeader}). */
    leader: boolean;
    /** The shards it leads (see {@link Scheduler.shards}). */
    shards: number[];
    /** Fencing term of the newest shard leadership; 0 if it never led. */
    term: number;
    /** The liveness heartbeat that publishes this instance's declared schedules. */
    heartbeat: FailureLog['status'];
    /** The leader's firing loop (ok while not leading). */
    firing: FailureLog['status'];
    /** Each background service (notices, lease, firing, heartbeat). */
    services: ServiceHealth[];
  } {
    return {
      running: this.state === 'running',
      leader: this.isLeader,
      shards: this.shards,
      term: this.term,
      heartbeat: this.declarations.failures.status,
      firing: this.firing.failures.status,
      services: this.services.map((s) => s.health()),
    };
  }

  /** Schedules declared by this instance (code-defined), in registry form. */
  get declaredSchedules(): StoredSchedule[] {
    return this.declarations.schedules;
  }

  /**
   * Declares a schedule (before start). Its definition is published to Redis at start.
   * @throws InvalidScheduleError for a bad spec, zone or option (naming the schedule and the value).
   * @throws DuplicateScheduleError when the name is already declared here.
   * @throws ChronosStateError after start (use {@link addSchedule} then).
   */
  register(def: ScheduleDefinition, source?: string): StoredSchedule {
    if (this.state !== 'new') {
      throw new ChronosStateError(
        `Schedule "${def?.name}" cannot be registered after start: use addSchedule() to add a schedule at run time`,
      );
    }
    const { stored } = toStored(def, this.timeZone, false, this.admin.maxPayloadBytes);
    this.declarations.declare(stored, source);
    return stored;
  }

  /**
   * Publishes declared schedules, starts the liveness heartbeat and (if eligible) campaigns. A start
   * that fails closes what it opened (the scheduler is then stopped). A {@link stop} during the start
   * ends it after its step in flight: it resolves, the scheduler stopped.
   * @throws RedisUnreachableError, RedisVersionError on Redis < 6.2, RedisEvictionPolicyError (with
   * `requireNoEviction`); ChronosStateError when started twice.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new ChronosStateError(`Scheduler ${this.instanceId} cannot start: it is ${this.state}`);
    this.state = 'running';
    const stopped = () => (this.state as string) === 'stopped'; // stop() was called while starting
    const steps: (() => unknown)[] = [
      () => checkServer(this.conn.client, { logger: this.logger, requireNoEviction: this.requireNoEviction }),
      () => this.migrate(), // the registry of a version before shards, if any (a rolling deploy)
      () => this.declarations.publish(),
      ...this.services.map((service) => () => service.start()),
    ];
    try {
      for (const step of steps) {
        if (stopped()) return;
        await step();
      }
    } catch (err) {
      if (stopped()) return; // the step in flight failed because the stop closed the connections: not an error
      await this.stop();
      throw err;
    }
    if (stopped()) return;
    this.logger.log(
      `Scheduler started (instance=${this.instanceId} schedules=${this.declarations.size} eligible=${this.eligible} ` +
        `leaderTtlMs=${this.leaderTtlMs})`,
    );
  }

  /**
   * Stops firing and resigns (compare-and-delete + notice, so a follower takes over at once), then
   * closes owned connections. Idempotent (a second call waits for the first). It ends within
   * 5,000 ms (`SHUTDOWN_REDIS_GRACE_MS`) + the connections' close (≤ 1 s, all at once) even when
   * Redis does not answer: the shard leases it could not release then expire by their TTL
   * (`leaderTtl`), and another instance takes them.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }
  private stopping?: Promise<void>;

  /**
   * True when the stop went on without the rest of its Redis work (Redis did not answer within
   * `SHUTDOWN_REDIS_GRACE_MS`).
   * @internal
   */
  get gaveUpOnRedis(): boolean {
    return this.gaveUp;
  }
  private gaveUp = false;

  private async doStop(): Promise<void> {
    this.state = 'stopped';
    // reverse order: the heartbeat, the firing loop (halted, its work awaited), the lease (resigned), the notices
    if (!(await settlesWithin(stopServices(this.services), SHUTDOWN_REDIS_GRACE_MS))) {
      this.gaveUp = true;
      haltServices(this.services); // the loops a stop still waiting on Redis did not reach
      this.logger.warn(
        `Shutdown: Redis did not answer within ${SHUTDOWN_REDIS_GRACE_MS} ms (SHUTDOWN_REDIS_GRACE_MS); stopping without waiting for ` +
          `the shard leases' release: they expire by their TTL (leaderTtlMs=${this.leaderTtlMs}) and another instance takes them then`,
      );
    }
    // at once; closing them also ends whatever the services' stop still waits on
    await Promise.all([this.notices?.stop(), closeConnection(this.conn)]);
  }

  // ------------------------------------------------------------------ runtime API (admin/schedule-acts.ts)

  /** Wakes the firing loops at once (for fake clocks that jump). */
  clockChanged(): void {
    this.firing.wake();
  }

  /** A migration pass of the registry of a version before shards (migrate.ts), one at a time; a failure is logged (the next notice or start tries again). */
  private migrate(): Promise<void> {
    this.migrating ??= migrateLegacyRegistry(this.conn.client, this.keys, this.logger, () => this.state === 'running')
      .then(() => undefined)
      .catch((err: unknown) => {
        // a stop closed the connection under it: the next start tries again, nothing to warn about
        if (this.state === 'running')
          this.logger.warn(`Could not move the earlier version's schedules into the shards (error=${String(err)})`);
      })
      .finally(() => (this.migrating = undefined));
    return this.migrating;
  }
  private migrating?: Promise<void>;

  /** Redis time now (the process's time source), or the test clock. */
  private now(): number {
    return this.trustLocalClock ? this.clock.now() : this.time.now();
  }
}
