// What the chaos rig (bench/chaos/run.ts) and its child processes share: the fleet's settings, the
// schedules, the record shapes written to the records Redis, and the records client with its Redis
// clock estimate.
import { Redis } from 'ioredis';
import type { ScheduleDefinition } from '../../lib/core/index.js';
import { nowMs } from '../lib/time.js';

/** The settings of the issue-8 experiment. Durations are ms. */
export const FLEET = {
  replicas: 5,
  leaderTtlMs: 2000,
  visibilityTimeoutMs: 5000,
  tasksPerSecond: 200,
  /** How long each handler works (a timer), so a fault can land while a handler runs. */
  handlerMs: 10,
  concurrency: 20,
  taskQueue: 'default',
  triggerQueue: 'triggers',
  taskType: 'chaos.task',
  triggerType: 'chaos.tick',
  /**
   * A limited queue (issue 21): `limitedPerSecond` tasks/s round-robin over `limitedGroups` groups,
   * each handler `limitedHandlerMs`, under `limits` (fleet-wide concurrency and one task per group at
   * once): both bind often, and the run judges that neither is ever exceeded.
   */
  limitedQueue: 'limited',
  limitedType: 'chaos.limited',
  limitedPerSecond: 6,
  limitedHandlerMs: 300,
  limitedGroups: 3,
  limits: { concurrency: 3, groupConcurrency: 1 },
} as const;

/** Four `@every 1s` schedules and two `* * * * *` schedules, all on the trigger queue. */
export const SCHEDULES: ScheduleDefinition[] = [
  ...[1, 2, 3, 4].map((i) => ({ name: `every-${i}`, spec: '@every 1s' })),
  ...[1, 2].map((i) => ({ name: `minute-${i}`, spec: '* * * * *' })),
].map((s) => ({ ...s, queue: FLEET.triggerQueue, type: FLEET.triggerType }));

/** The list every process appends its records to (RPUSH: nothing is lost when a process is SIGKILLed). */
export const RECORDS_KEY = 'chaos:records';

/** Config of a replica child (BENCH_CONFIG). */
export interface ReplicaConfig {
  /** The chaos Redis (restarted during the run), as the engine reaches it: through the replica's slot's proxy. */
  url: string;
  /** The chaos Redis itself, for the replica's own Redis-time measurement (`RedisClock`): never partitioned. */
  clockUrl: string;
  /** The records Redis (never restarted). */
  recordsUrl: string;
  namespace: string;
  /** Instance id: `r<slot>.<incarnation>`; the server id and the lease holder's name. */
  name: string;
}

/** Config of the producer child. */
export interface ProducerConfig {
  url: string;
  recordsUrl: string;
  namespace: string;
}

/**
 * One record. `t` is the writer's local clock (epoch ms, sub-ms: performance.timeOrigin + now()),
 * `i` the writing instance.
 * - `enq`: the producer's enqueue of task `id` (payload n) was acknowledged; `enqfail`: it rejected.
 * - `start` / `done`: a handler started / finished task `id` (`q` 't' trigger, 'd' task, 'l' a task of
 *   the limited queue, with its group `g`); a trigger's
 *   start carries `tr` (its instant), `rt` (the start by Redis time: `t` + the process's offset
 *   estimate) and `eb` (that estimate's error bound, ms); a runtime schedule's trigger also `pv`, its payload's `v`.
 * - `fired`: this instance's scheduler enqueued trigger `id`; `lead`: leadership acquired (`a`) or lost.
 * - `up`: the process is running (scheduler and worker started).
 */
export type ChaosRecord =
  | { k: 'enq'; id: string; n: number; t: number; i: string }
  | { k: 'enqfail'; n: number; t: number; i: string; err: string }
  | {
      k: 'start';
      id: string;
      q: 't' | 'd' | 'l';
      t: number;
      i: string;
      tr?: number;
      rt?: number;
      eb?: number;
      r: number;
      g?: string;
      pv?: number;
    }
  | { k: 'done'; id: string; q: 't' | 'd' | 'l'; t: number; i: string; g?: string }
  | { k: 'fired'; id: string; tr: number; t: number; i: string }
  | { k: 'lead'; a: boolean; term: number; t: number; i: string; reason?: string; /** the shards taken or lost */ sh?: number[] }
  | { k: 'up'; t: number; i: string };

/** A connection to the records Redis: `write` is an RPUSH (await it where the record must precede what follows). */
export function recorder(url: string): { write(r: ChaosRecord): Promise<unknown>; close(): Promise<void> } {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => {});
  return {
    write: (r) => redis.rpush(RECORDS_KEY, JSON.stringify(r)),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * This process's estimate of Redis server time, from its own `TIME` calls (every `everyMs`) on a
 * connection without an offline queue (a call made while Redis is down fails at once instead of
 * being answered late). A sample is offset = Redis TIME − the midpoint of the call's round trip,
 * good to ± RTT/2. Samples with an RTT over `maxRttMs` are dropped (a reply delayed by a stall,
 * a SIGSTOP or a reconnect); of the kept samples of the last `windowMs`, the one with the shortest
 * RTT is used. When there is none (Redis down, or this process was stopped), the last estimate stays.
 */
export class RedisClock {
  private offsetMs = 0;
  private boundMs = Infinity;
  private samples: { at: number; offset: number; rtt: number }[] = [];
  private readonly redis: Redis;
  private timer?: NodeJS.Timeout;

  constructor(
    url: string,
    private readonly everyMs = 200,
    private readonly maxRttMs = 20,
    private readonly windowMs = 5000,
  ) {
    this.redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: false });
    this.redis.on('error', () => {});
  }

  start(): void {
    const loop = async () => {
      await this.sample().catch(() => {});
      this.timer = setTimeout(() => void loop(), this.everyMs);
    };
    void loop();
  }

  private async sample(): Promise<void> {
    const t0 = nowMs();
    const [s, us] = (await this.redis.time()) as [string | number, string | number];
    const t1 = nowMs();
    const rtt = t1 - t0;
    if (rtt > this.maxRttMs) return;
    this.samples.push({ at: t1, offset: Number(s) * 1000 + Number(us) / 1000 - (t0 + t1) / 2, rtt });
    this.samples = this.samples.filter((x) => x.at >= t1 - this.windowMs);
    const best = this.samples.reduce((a, b) => (b.rtt < a.rtt ? b : a));
    this.offsetMs = best.offset;
    this.boundMs = best.rtt / 2;
  }

  /** True once one sample was kept. */
  get ready(): boolean {
    return this.boundMs !== Infinity;
  }

  /** `{ rt, eb }`: the local instant `t` by Redis time, and the error bound of that estimate (ms). */
  at(t: number): { rt: number; eb: number } {
    return { rt: t + this.offsetMs, eb: this.boundMs };
  }

  stop(): void {
    clearTimeout(this.timer);
    this.redis.disconnect();
  }
}
