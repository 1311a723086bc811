import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Provider, Type } from '@nestjs/common';
import type { MetricsRegistry } from '../../core/observability/metrics.js';
import type { BackoffFn } from '../../core/queue/task.js';
import type { RedisConnection } from '../../core/redis/connection.js';
import type { ChronosConsoleOptions } from '../console/console-options.js';

import type { QueueLimitsUpdate } from '../../core/queue/limits.js';

/**
 * A queue of the `queues` module option: its weight on this worker, and its fleet-wide limits
 * (`QueueLimitsUpdate`: `concurrency`, `rate`, `groupConcurrency`, `groupRate`, `groups`), applied at boot.
 * @publicApi
 */
export type QueueOptions = QueueLimitsUpdate & {
  /** Weight of the queue on this worker (an integer from 1 to 1,000,000). @defaultValue 1 */
  weight?: number;
};

/**
 * Options of `ChronosModule.forRoot` / `forRootAsync`. Durations are milliseconds. Every option
 * is validated at boot; problems are reported together in one `ChronosConfigError`, and unknown
 * keys are rejected (a typo guard).
 * @publicApi
 */
export interface ChronosModuleOptions {
  /**
   * Redis: a URL (`redis://[:password@]host:port[/db]`, `rediss://…`), ioredis options, an ioredis
   * `Redis`/`Cluster` instance, or `{ cluster: nodes, options }`. A client instance the app passes
   * in is shared by Chronos and **never closed** by it; connections Chronos opens from a URL or
   * options are closed at shutdown. ioredis `keyPrefix` is refused (use `namespace`).
   * @defaultValue 'redis://127.0.0.1:6379'
   */
  connection?: RedisConnection;
  /** Key prefix isolating this app on a shared Redis (1-200 chars of `[A-Za-z0-9_.:-]`, not `.` or `..`). @defaultValue 'chronos' */
  namespace?: string;
  /**
   * Id of this instance: its consumer name on every queue and its name as a scheduler (the lease
   * holder shown by the Inspector). Must be unique among running instances.
   * @defaultValue `<hostname>:<pid>:<6 hex>`
   */
  instanceId?: string;
  /** Default IANA time zone of `@Cron` schedules. @defaultValue 'UTC' */
  timeZone?: string;
  /** Queue of tasks enqueued without `queue`, and of schedules without `queue`. @defaultValue 'default' */
  queue?: string;
  /** Default retries of a failing task before it is dead (1 + maxRetry attempts). @defaultValue 25 */
  maxRetry?: number;
  /** Default timeout of one handler attempt, ms; 0 = none. @defaultValue 1800000 (30 min) */
  timeout?: number;
  /**
   * Leader lease TTL, ms (≥ 1000), renewed every TTL/2. A crashed leader is replaced within about
   * this long; a graceful stop hands over at once. @defaultValue 5000
   */
  leaderTtl?: number;
  /** Scheduler liveness heartbeat, ms (≥ 100); an instance is gone after 3 missed beats. @defaultValue 5000 */
  heartbeatInterval?: number;
  /** Handlers running at once on this instance (≥ 1). @defaultValue 10 */
  concurrency?: number;
  /**
   * Queues this worker serves: a list (equal weights) or `{ name: weight }` (a backlogged queue of
   * weight 6 gets about 6 tasks for every 1 of a queue of weight 1: smooth weighted round-robin), or
   * `{ name: { weight?, concurrency?, rate?, groupConcurrency?, groupRate?, groups? } }`: the queue's
   * **fleet-wide** limits, stored in Redis and applied at boot (`setQueueLimits`; a limit left out is
   * left as stored, `null` clears it). `concurrency` here is the queue's, across every worker; the
   * module's own `concurrency` is this instance's handlers at once.
   * @defaultValue the default `queue` plus every queue a discovered `@Cron`/`@Interval`/`@TaskHandler` names, weight 1 each
   */
  queues?: readonly string[] | Readonly<Record<string, number | QueueOptions>>;
  /** Serve `queues` in strict priority (list order, or highest weight first). @defaultValue false */
  strictPriority?: boolean;
  /**
   * Grace given to running handlers at shutdown, ms: after it they are aborted (their
   * `task.signal` fires) and their tasks go straight back to the queue. @defaultValue 8000
   */
  shutdownTimeout?: number;
  /**
   * A delivered task whose worker stops extending its claim for this long is reclaimed by another
   * worker, ms (≥ 100). Running handlers keep their claim alive. A worker whose process died is
   * found by liveness on one Redis or Sentinel and its tasks are reclaimed at once (about 2 s), not
   * after this; the visibility timeout covers a stopped or hung worker, and every crash on a Redis
   * Cluster (README, Recovery). @defaultValue 30000
   */
  visibilityTimeout?: number;
  /** How often each worker looks for tasks to reclaim, ms (≥ 10). @defaultValue 2000 */
  recoverInterval?: number;
  /** Reclaims (worker crashes) before a task is dead as poison (≥ 1). @defaultValue 5 */
  maxDeliveries?: number;
  /**
   * Largest task payload `ChronosClient.enqueue` accepts, in UTF-8 bytes of its JSON; a bigger one is
   * an `InvalidPayloadError` naming its size and the limit. A schedule's payload (`@Cron`/`@Interval`
   * `payload`, `SchedulerService.addSchedule` and the bulk adds), copied into each trigger's task, is
   * held to it too: an `InvalidScheduleError` (at boot, a `ChronosDiscoveryError`). 0 = no limit. @defaultValue 1048576 (1 MiB)
   */
  maxPayloadBytes?: number;
  /**
   * Refuse to boot (`RedisEvictionPolicyError`) when Redis's `maxmemory-policy` is not `noeviction`,
   * instead of logging a warning: an evicting Redis can drop leases, dedup keys and tasks. @defaultValue false
   */
  requireNoEviction?: boolean;
  /**
   * Write schedule definitions in the compact stored form (about 200 B less each in Redis; both forms
   * are always read). Turn it on only once every instance of the namespace runs this version or a
   * later one: an earlier version cannot read a compact definition. @defaultValue false
   */
  compactSchedules?: boolean;
  /**
   * Most fire records kept per schedule (its history in the Inspector, the CLI and the console), an
   * integer from 0 to 100; 0 keeps none. About 145 B of Redis per record: lower it when schedules
   * come by the hundred thousand. Set it alike on every replica (each shard's leader applies its
   * own). @defaultValue 100
   */
  historyLimit?: number;
  /**
   * Delay before a retry, ms, from the failed attempts so far. `@TaskHandler({ backoff })`
   * overrides it per type. @defaultValue Sidekiq's `retried^4 + 15 + rand(30)·(retried+1)` seconds
   */
  backoff?: BackoffFn;
  /**
   * Scheduler role. `false`: this instance neither declares its schedules nor campaigns for the
   * leader lease (its worker still runs scheduled tasks). `{ eligible: false }`: it declares its
   * schedules (they stay live) but never leads. @defaultValue true
   */
  scheduler?:
    | boolean
    | {
        /** `false`: declare the schedules but never campaign for the lease. @defaultValue true */
        eligible?: boolean;
      };
  /** Worker role. `false`: this instance runs no handlers (it can still enqueue). @defaultValue true */
  worker?: boolean;
  /**
   * Prometheus metrics (needs the optional peer `prom-client`). `true` registers them in
   * prom-client's default registry — the one `@willsoto/nestjs-prometheus` serves on `/metrics`;
   * `{ registry }` in the app's own. `fleet: false` leaves the fleet gauges (read from Redis,
   * the same on every replica) out on this replica; `fleetCacheMs` is how long one fleet read
   * serves the scrapes (ms, ≥ 0), `fleetTimeoutMs` the longest a scrape waits for it (ms, default
   * 5000). The collector is injectable as `ChronosMetrics`.
   * @defaultValue false
   */
  metrics?:
    | boolean
    | {
        /** The prom-client `Registry` to register the metrics in. @defaultValue prom-client's default registry */
        registry?: MetricsRegistry;
        /** `false`: leave the fleet gauges (queue depths and latency read from Redis) out on this replica. @defaultValue true */
        fleet?: boolean;
        /** How long one fleet read from Redis serves the scrapes, ms (≥ 0). @defaultValue 1000 */
        fleetCacheMs?: number;
        /**
         * Longest wait of a scrape for the fleet read, ms (1 to 2147483647): past it (Redis down or
         * stalled) the fleet gauges are empty for that scrape and `chronos_fleet_read_errors_total`
         * counts it, while the per-process metrics are served. @defaultValue 5000
         */
        fleetTimeoutMs?: number;
      };
  /**
   * The web console (express apps), mounted at `path` under the global prefix: `true` or
   * `{ path, readOnly, guard, authorize, redact, actor }`. It runs behind the app's global guards,
   * `guard` and `authorize(req)`; see docs/console.md. @defaultValue false (not mounted)
   */
  console?: boolean | ChronosConsoleOptions;
}

/** A class that builds the options (`forRootAsync({ useClass })`). @publicApi */
export interface ChronosOptionsFactory {
  /** Builds the module options; called once at boot, may be async (e.g. to read a secret). */
  createChronosOptions(): ChronosModuleOptions | Promise<ChronosModuleOptions>;
}

/**
 * Options of `ChronosModule.forRootAsync`: exactly one of `useFactory`, `useClass`, `useExisting`.
 * @publicApi
 */
export interface ChronosModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options from the providers listed in `inject` (in that order); may be async. */
  useFactory?: (...args: any[]) => ChronosModuleOptions | Promise<ChronosModuleOptions>;
  /** Providers passed to `useFactory` as its arguments (e.g. `[ConfigService]`). */
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  /** A class Chronos instantiates (with its own dependencies) and calls `createChronosOptions()` on. */
  useClass?: Type<ChronosOptionsFactory>;
  /** An existing provider of the app whose `createChronosOptions()` builds the options. */
  useExisting?: Type<ChronosOptionsFactory>;
  /** Providers made available to `useFactory`/`useClass` (bull's `extraProviders`). */
  extraProviders?: Provider[];
}
