import { Injectable } from '@nestjs/common';
import { ChronosClient } from '../services/chronos.client.js';
import { SchedulerService } from '../services/scheduler.service.js';
import { WorkerService } from '../services/worker.service.js';

/** Details of the Chronos health check. @publicApi */
export interface ChronosHealthDetails {
  /** `'up'` when Redis answered PING within the timeout. */
  redis: 'up' | 'down';
  redisError?: string;
  /** Worker role: disabled, or running with its active handler count; `failing` names a loop that keeps failing. */
  worker: { enabled: boolean; running: boolean; active: number; failing?: string };
  /** Scheduler role: disabled, or running, whether this instance holds the lease (with its term); `failing` as above. */
  scheduler: { enabled: boolean; running: boolean; leader: boolean; term: number; failing?: string };
}

/**
 * A health result in the shape `@nestjs/terminus` expects (`HealthIndicatorResult`): returned,
 * never thrown, so terminus reports `'down'` without Chronos importing terminus.
 * @publicApi
 */
export type ChronosHealthResult<Key extends string = string> = Record<Key, { status: 'up' | 'down' } & ChronosHealthDetails>;

/**
 * Health of this instance's Chronos: Redis reachable, the worker running (when enabled) with its
 * fetch and forward loops not failing, the scheduler running (when enabled) with its heartbeat and
 * firing loop not failing, and its lease state. Usable with `@nestjs/terminus` (an
 * optional peer dependency; Chronos does not import it):
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.chronos.isHealthy('chronos')]); }
 * ```
 * Being a follower is healthy; only an enabled role that is not running (or Redis) is `'down'`.
 * @publicApi
 */
@Injectable()
export class ChronosHealthIndicator {
  constructor(
    private readonly client: ChronosClient,
    private readonly worker: WorkerService,
    private readonly scheduler: SchedulerService,
  ) {}

  /**
   * Checks and returns `{ [key]: { status, redis, worker, scheduler } }`.
   * @param key result key. @defaultValue 'chronos'
   * @param timeoutMs how long PING may take, ms. @defaultValue 1000
   */
  async isHealthy<Key extends string = 'chronos'>(key: Key = 'chronos' as Key, timeoutMs = 1000): Promise<ChronosHealthResult<Key>> {
    let redis: 'up' | 'down' = 'up';
    let redisError: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.client.redis.ping(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to PING within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } catch (err) {
      redis = 'down';
      redisError = (err as Error).message;
    } finally {
      clearTimeout(timer);
    }
    const w = this.worker.health();
    const s = this.scheduler.health();
    const workerFailing = failing({ fetch: w?.fetch, forward: w?.forward });
    const schedulerFailing = this.scheduler.enabled ? failing({ heartbeat: s.heartbeat, firing: s.firing }) : undefined;
    const details: ChronosHealthDetails = {
      redis,
      ...(redisError ? { redisError } : {}),
      worker: {
        enabled: this.worker.enabled,
        running: this.worker.isRunning,
        active: this.worker.activeCount,
        ...(workerFailing ? { failing: workerFailing } : {}),
      },
      scheduler: {
        enabled: this.scheduler.enabled,
        running: this.scheduler.isRunning,
        leader: this.scheduler.isLeader,
        term: this.scheduler.term,
        ...(schedulerFailing ? { failing: schedulerFailing } : {}),
      },
    };
    const roleUp = (r: { enabled: boolean; running: boolean; failing?: string }) => !r.enabled || (r.running && !r.failing);
    const up = redis === 'up' && roleUp(details.worker) && roleUp(details.scheduler);
    return { [key]: { status: up ? 'up' : 'down', ...details } } as ChronosHealthResult<Key>;
  }
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
