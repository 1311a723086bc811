import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { LeaderInfo } from '../../core/admin/inspector.js';
import { CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from '../services/chronos.client.js';
import { InspectorService } from '../services/inspector.service.js';
import { SchedulerService } from '../services/scheduler.service.js';
import { WorkerService } from '../services/worker.service.js';

/** Details of the Chronos health check. Durations are ms. @publicApi */
export interface ChronosHealthDetails {
  /** `'up'` when Redis answered PING within the timeout. */
  redis: 'up' | 'down';
  /** Why Redis is `down`: the error of PING or of the lease read (e.g. `no answer to PING within 1000 ms`). */
  redisError?: string;
  /**
   * Worker role: disabled, or running with its active handler count; `failing` names a loop that
   * keeps failing. `blocking`: the worker's blocking connection (its fetch reads answer).
   * `lastFetchAgoMs`: since the worker's last read returned, when the worker reports it.
   */
  worker: {
    /** Whether this instance runs the worker role (the `worker` option). */
    enabled: boolean;
    /** Whether the worker server is running. */
    running: boolean;
    /** Handlers running now. */
    active: number;
    /** While running: `up` when the blocking connection is ready and the fetch loop is not failing. */
    blocking?: 'up' | 'down';
    /** Since the worker's last fetch read returned, ms, when the worker reports it. */
    lastFetchAgoMs?: number;
    /** Why the role is unhealthy, e.g. `fetch failing since <iso>: <error>`; absent when healthy. */
    failing?: string;
  };
  /**
   * Scheduler role: disabled, or running, whether this instance holds the lease (with its term);
   * `failing` as above. `lease`: the current leader's lease as Redis has it (`ageMs` since its
   * last renewal, `ttlMs` left), or null when nobody leads.
   */
  scheduler: {
    /** Whether this instance runs the scheduler role (the `scheduler` option). */
    enabled: boolean;
    /** Whether the scheduler is running. */
    running: boolean;
    /** Whether this instance holds the leader lease by its own clock. */
    leader: boolean;
    /** Fencing term of this instance's current or last leadership (0 if it never led). */
    term: number;
    /** The lease as Redis has it, or null when nobody leads; absent when the role is disabled or Redis did not answer. */
    lease?: {
      /** Instance id of the lease holder. */
      holder: string;
      /** The holder's fencing term. */
      term: number;
      /** Since the lease's last renewal, ms (`leaderTtl` minus `ttlMs`). */
      ageMs: number;
      /** Time left on the lease, ms (PTTL). */
      ttlMs: number;
    } | null;
    /** Why the role is unhealthy (a failing loop, a lease held by another, a late renewal); absent when healthy. */
    failing?: string;
  };
}

/**
 * A health result in the shape `@nestjs/terminus` expects (`HealthIndicatorResult`): returned,
 * never thrown, so terminus reports `'down'`.
 * @publicApi
 */
export type ChronosHealthResult<Key extends string = string> = Record<
  Key,
  {
    /** `up` when Redis answers and every enabled role runs without failing. */
    status: 'up' | 'down';
  } & ChronosHealthDetails
>;

/** What a worker may report beyond `ChronosServer.health()` (read when present). */
interface WorkerExtras {
  lastFetchAt?: number;
  blocking?: { ready: boolean };
}

/** Terminus's `HealthIndicatorSession` as used here. */
interface Session {
  up(data: object): Record<string, unknown>;
  down(data: object): Record<string, unknown>;
}

/** A fetch read returns at least once per block timeout (1 s) while a slot is free: a minute without one is stuck. */
const STALE_FETCH_MS = 60_000;

/**
 * Health of this instance's Chronos, built with Terminus 11+'s `HealthIndicatorService` (the
 * `HealthIndicator` base class is deprecated; terminus is an optional peer, loaded when this runs).
 * `'down'` when: Redis does not answer PING; an enabled role is not running or one of its loops
 * keeps failing (worker fetch/forward, scheduler heartbeat/firing); the worker's blocking
 * connection fails; the worker has not fetched for a minute with a slot free (when it reports
 * it); or this instance leads but Redis has the lease held by another (or nobody), or its lease
 * is older than ¾ of `leaderTtl` (renewals, due every TTL/2, are late; every replica is assumed
 * to run with the same `leaderTtl`). Being a follower is healthy.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.chronos.isHealthy('chronos')]); }
 * ```
 * @publicApi
 */
@Injectable()
export class ChronosHealthIndicator {
  private sessions?: Promise<(key: string) => Session>;

  /** Created by Nest's injector (inject the indicator; do not construct it). @internal */
  constructor(
    private readonly client: ChronosClient,
    private readonly worker: WorkerService,
    private readonly scheduler: SchedulerService,
    private readonly inspector: InspectorService,
    @Inject(CHRONOS_OPTIONS) private readonly options: ResolvedChronosOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Checks and returns `{ [key]: { status, redis, worker, scheduler } }`.
   * @param key result key. @defaultValue 'chronos'
   * @param timeoutMs how long PING (and the lease read) may take, ms. @defaultValue 1000
   */
  async isHealthy<Key extends string = 'chronos'>(key: Key = 'chronos' as Key, timeoutMs = 1000): Promise<ChronosHealthResult<Key>> {
    let redis: 'up' | 'down' = 'up';
    let redisError: string | undefined;
    let lease: LeaderInfo | null | undefined;
    // shards taken while the lease read is under way cannot be in its answer: only those led before it count
    const ledBefore = this.scheduler.shards;
    try {
      await withTimeout(this.client.redis.ping(), timeoutMs, 'PING');
      if (this.scheduler.enabled) lease = await withTimeout(this.inspector.leader(), timeoutMs, 'the lease read');
    } catch (err) {
      redis = 'down';
      redisError = (err as Error).message;
    }
    const w = this.worker.health() as (ReturnType<WorkerService['health']> & WorkerExtras) | undefined;
    const s = this.scheduler.health();
    const workerFailing = failing({ fetch: w?.fetch, forward: w?.forward });
    const schedulerFailing = this.scheduler.enabled ? failing({ heartbeat: s.heartbeat, firing: s.firing }) : undefined;
    const worker: ChronosHealthDetails['worker'] = {
      enabled: this.worker.enabled,
      running: this.worker.isRunning,
      active: this.worker.activeCount,
    };
    if (w?.running) {
      worker.blocking = (w.blocking ? w.blocking.ready : true) && w.fetch.ok ? 'up' : 'down';
      if (w.lastFetchAt !== undefined) worker.lastFetchAgoMs = Math.max(0, Date.now() - w.lastFetchAt);
    }
    if (workerFailing) worker.failing = workerFailing;
    else if (worker.blocking === 'down') worker.failing = 'the blocking connection is not ready';
    else if ((worker.lastFetchAgoMs ?? 0) > STALE_FETCH_MS && worker.active < this.options.concurrency) {
      worker.failing = `no fetch for ${worker.lastFetchAgoMs} ms with a free slot`;
    }
    const scheduler: ChronosHealthDetails['scheduler'] = {
      enabled: this.scheduler.enabled,
      running: this.scheduler.isRunning,
      leader: this.scheduler.isLeader,
      term: this.scheduler.term,
    };
    if (lease !== undefined) {
      // the shards this instance led through the read, as Redis has them: the oldest renewal among them, and any held by another
      const now = this.scheduler.shards;
      const mine = ledBefore.filter((k) => now.includes(k));
      const held = (lease?.shards ?? []).filter((s) => mine.includes(s.shard));
      const own = held.filter((s) => s.instance === this.scheduler.instanceId);
      const ttlMs = own.length > 0 ? Math.min(...own.map((s) => s.ttlMs)) : (lease?.ttlMs ?? 0);
      const ageMs = lease ? Math.max(0, this.options.leaderTtl - ttlMs) : 0;
      // the lease shown is this replica's while it leads, else the leader's: holder and term of one lease
      scheduler.lease = lease && {
        holder: own.length > 0 ? this.scheduler.instanceId : lease.instance,
        term: own.length > 0 ? this.scheduler.term : lease.term,
        ageMs,
        ttlMs,
      };
      const lost = mine.filter((k) => !own.some((s) => s.shard === k));
      if (!schedulerFailing && scheduler.leader && lost.length > 0) {
        const other = (lease?.shards ?? []).find((s) => s.shard === lost[0]);
        scheduler.failing = `this instance leads shard ${lost[0]} but Redis has its lease held by ${other ? other.instance : 'nobody'}`;
      }
    }
    if (schedulerFailing) scheduler.failing = schedulerFailing;
    else if (scheduler.leader && scheduler.lease && !scheduler.failing && scheduler.lease.ageMs > this.options.leaderTtl * 0.75) {
      scheduler.failing = `lease renewal late: last renewed ${scheduler.lease.ageMs} ms ago (leaderTtl ${this.options.leaderTtl} ms)`;
    }
    const details: ChronosHealthDetails = { redis, ...(redisError ? { redisError } : {}), worker, scheduler };
    const roleUp = (r: { enabled: boolean; running: boolean; failing?: string }) => !r.enabled || (r.running && !r.failing);
    const up = redis === 'up' && roleUp(worker) && roleUp(scheduler);
    const session = (await this.sessionFactory())(key);
    return (up ? session.up(details) : session.down(details)) as ChronosHealthResult<Key>;
  }

  /** Terminus's `HealthIndicatorService` (the app's, else a new one); a plain equivalent without terminus. */
  private sessionFactory(): Promise<(key: string) => Session> {
    this.sessions ??= import('@nestjs/terminus').then(
      ({ HealthIndicatorService }) => {
        let service: InstanceType<typeof HealthIndicatorService>;
        try {
          service = this.moduleRef.get(HealthIndicatorService, { strict: false });
        } catch {
          service = new HealthIndicatorService();
        }
        return (key: string) => service.check(key) as Session;
      },
      () => (key: string) => ({
        up: (data: object) => ({ [key]: { ...data, status: 'up' } }),
        down: (data: object) => ({ [key]: { ...data, status: 'down' } }),
      }),
    );
    return this.sessions;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** `"<loop> failing since <iso>: <error>"` for the first failing loop, or undefined. */
function failing(
  loops: Record<string, { ok: true } | { ok: false; failingSince: number; lastError: string } | undefined>,
): string | undefined {
  for (const [name, st] of Object.entries(loops)) {
    if (st && !st.ok) return `${name} failing since ${new Date(st.failingSince).toISOString()}: ${st.lastError}`;
  }
  return undefined;
}
