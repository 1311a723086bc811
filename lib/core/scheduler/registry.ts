/**
 * The schedule registry in Redis: this instance's declarations (published with
 * register-schedules.lua, kept alive by its heartbeat), which schedules a live instance declares
 * (an undeclared one is orphaned and does not fire), and the admin API on the registry, callable
 * without a running Scheduler.
 *
 * Every change (pause, resume, remove, a new definition) is two single-slot steps, in this order:
 * the registry change in the scheduler's slot, which takes a new generation and announces it on the
 * changes channel (the leader reloads at once), then {@link raiseFences} in the slot of the queue
 * the schedule targeted, beside its lastFired. Once the call resolves, fire.lua refuses any trigger
 * planned under the old state, even by a leader that missed the notice.
 */
import { randomUUID } from 'node:crypto';
import { DuplicateScheduleError, ScheduleNotFoundError } from '../errors.js';
import { FailureLog, type ChronosLogger } from '../logger.js';
import { encodeMeta } from '../queue/codec.js';
import type { RedisClient } from '../redis/connection.js';
import {
  fenceSchedulesScript,
  heartbeatScript,
  registerSchedulesScript,
  scheduleAdminScript,
  type Fence,
} from '../redis/schedule-commands.js';
import { GlobalKeys, QueueKeys, type SchedulerKeys } from '../redis/keys.js';
import { entryFields, META, newMeta } from '../redis/protocol.js';
import { toStored, type ScheduleDefinition, type StoredSchedule } from './definition.js';

// ------------------------------------------------------------------ admin API

/**
 * Adds (or replaces) a runtime schedule: it lives in Redis, so the leader fires it whichever
 * instance added it; it is never orphaned. Its queue is listed in the namespace's queues.
 * @param defaultTimeZone zone of a cron spec that names none
 * @throws InvalidScheduleError naming the schedule and the bad value
 */
export async function addSchedule(
  client: RedisClient,
  keys: SchedulerKeys,
  namespace: string,
  def: ScheduleDefinition,
  defaultTimeZone: string,
): Promise<void> {
  const { stored } = toStored(def, defaultTimeZone, true);
  const r = await scheduleAdminScript(client, keys, 'put', stored.name, JSON.stringify(stored));
  if (r.previousQueue !== undefined) {
    await raiseFences(client, namespace, [{ schedule: stored.name, queue: r.previousQueue, generation: r.generation }]);
  }
  await client.sadd(new GlobalKeys(namespace).queues, stored.queue); // the Inspector lists its queue from now on
}

/**
 * Removes a schedule from the registry. Once this resolves no trigger of it is enqueued any more
 * (one already enqueued ahead of its instant, ≤ 1 s, may still run). @throws ScheduleNotFoundError naming it
 */
export async function removeSchedule(client: RedisClient, keys: SchedulerKeys, name: string): Promise<void> {
  await scheduleAdmin(client, keys, 'delete', name);
}

/**
 * Pauses a schedule fleet-wide: its triggers are skipped while paused (counted and logged once at
 * the resume). Once this resolves no later trigger is enqueued (one already enqueued ahead of its
 * instant, ≤ 1 s, may still run). @throws ScheduleNotFoundError naming it
 */
export async function pauseSchedule(client: RedisClient, keys: SchedulerKeys, name: string): Promise<void> {
  await scheduleAdmin(client, keys, 'pause', name);
}

/** Resumes a paused schedule: its first trigger is its first instant after the resume. @throws ScheduleNotFoundError naming it */
export async function resumeSchedule(client: RedisClient, keys: SchedulerKeys, name: string): Promise<void> {
  await scheduleAdmin(client, keys, 'resume', name);
}

/**
 * Enqueues one task of the schedule now, without shifting its cadence (lastFired is untouched).
 * Its id is `<schedule>:manual:<uuid>`.
 * @param nowMs the task's enqueue and trigger instant (Redis time), epoch ms
 * @returns the task id. @throws ScheduleNotFoundError naming the schedule
 */
export async function triggerNow(
  client: RedisClient,
  keys: SchedulerKeys,
  namespace: string,
  name: string,
  nowMs: number,
): Promise<string> {
  const raw = await client.hget(keys.schedules, name);
  if (!raw) throw new ScheduleNotFoundError(name);
  const s = JSON.parse(raw) as StoredSchedule;
  const queueKeys = new QueueKeys(namespace, s.queue);
  const id = `${name}:manual:${randomUUID()}`;
  const meta = newMeta(s.maxRetry, s.timeoutMs, nowMs);
  meta[META.schedule] = name;
  meta[META.triggerAt] = nowMs;
  await client.xadd(queueKeys.stream, '*', ...entryFields(id, s.type, s.payload, encodeMeta(meta)));
  await client.sadd(new GlobalKeys(namespace).queues, s.queue);
  return id;
}

async function scheduleAdmin(client: RedisClient, keys: SchedulerKeys, op: 'delete' | 'pause' | 'resume', name: string): Promise<void> {
  const r = await scheduleAdminScript(client, keys, op, name);
  if (r.status === 'notFound') throw new ScheduleNotFoundError(name);
  await raiseFences(client, keys.namespace, [{ schedule: name, queue: r.previousQueue!, generation: r.generation }]);
}

/** Raises the generations of changed schedules in their queues' slots (one fence-schedules.lua call per queue). */
export async function raiseFences(client: RedisClient, namespace: string, fences: readonly Fence[]): Promise<void> {
  const byQueue = new Map<string, [string, number][]>();
  for (const f of fences) {
    const list = byQueue.get(f.queue);
    if (list) list.push([f.schedule, f.generation]);
    else byQueue.set(f.queue, [[f.schedule, f.generation]]);
  }
  for (const [queue, list] of byQueue) await fenceSchedulesScript(client, new QueueKeys(namespace, queue), list);
}

// ------------------------------------------------------------------ declarations and liveness

/** A schedule whose liveness the leader tracks. */
export interface LiveEntry {
  stored: Pick<StoredSchedule, 'name' | 'runtime'>;
  live: boolean;
}

/** What a {@link Declarations} works with. */
export interface DeclarationsContext {
  client: RedisClient;
  keys: SchedulerKeys;
  namespace: string;
  instanceId: string;
  /** Liveness heartbeat interval, ms: an instance is live while seen within 3 heartbeats. */
  heartbeatMs: number;
  logger: ChronosLogger;
  /** Redis time now (estimated), epoch ms. */
  now(): number;
  /** The local clock's now when the scheduler trusts it (test hook), else undefined (Redis time is used). */
  trustedLocalNow(): number | undefined;
  /** Called after each heartbeat that reached Redis (the leader refreshes liveness then). */
  beat(): void;
}

/**
 * This instance's declared (code-defined) schedules and its liveness heartbeat, plus the leader's
 * view of which schedules a live instance declares (orphans are logged once, and again when
 * declared again).
 */
export class Declarations {
  private readonly declared = new Map<string, StoredSchedule>();
  private readonly orphanLogged = new Set<string>();
  private heartbeatTimer?: NodeJS.Timeout;
  /** When a heartbeat last reached Redis (local clock, epoch ms). */
  private lastBeatAt = Date.now();
  /** The run_id of the Redis server the declarations were last published to. */
  private runId?: string;
  /** Health of the heartbeat loop. */
  readonly failures: FailureLog;

  constructor(private readonly ctx: DeclarationsContext) {
    this.failures = new FailureLog(ctx.logger, 'Scheduler heartbeat');
  }

  /** Declared schedules, in registry form. */
  get schedules(): StoredSchedule[] {
    return [...this.declared.values()];
  }

  get size(): number {
    return this.declared.size;
  }

  /** Declares a schedule (before start). @throws DuplicateScheduleError when the name is already declared here. */
  declare(stored: StoredSchedule, source?: string): void {
    if (this.declared.has(stored.name)) throw new DuplicateScheduleError(stored.name, source);
    this.declared.set(stored.name, stored);
  }

  /**
   * Publishes the declared schedules (register-schedules.lua: a changed definition replaces the
   * stored one and takes effect from now), fences the replaced ones, and lists their queues.
   */
  async publish(): Promise<void> {
    const { client, keys, instanceId } = this.ctx;
    const local = this.ctx.trustedLocalNow();
    const definitions = [...this.declared.values()].map((s) => [s.name, JSON.stringify(s)] as const);
    const declaredTtlMs = this.ctx.heartbeatMs * 3;
    const r = await registerSchedulesScript(client, keys, { instanceId, declaredTtlMs, nowMs: local, definitions });
    await raiseFences(client, this.ctx.namespace, r.fences);
    this.lastBeatAt = Date.now();
    this.runId = (await this.serverRun()).runId;
    if (this.declared.size > 0) {
      const queues = new Set([...this.declared.values()].map((s) => s.queue));
      await client.sadd(new GlobalKeys(this.ctx.namespace).queues, ...queues);
    }
  }

  /** Beats every heartbeatMs until {@link stopHeartbeat}. */
  startHeartbeat(): void {
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.ctx.heartbeatMs);
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  /** The connection is back (client 'ready' after a reconnect): beat now, publishing again if the registry lost us. */
  reconnected(): void {
    if (this.heartbeatTimer) void this.heartbeat();
  }

  private async heartbeat(): Promise<void> {
    const { client, keys, instanceId, heartbeatMs } = this.ctx;
    try {
      const { status } = await heartbeatScript(client, keys, instanceId, heartbeatMs * 3, this.declared.size > 0);
      if (status === 'declaredLost') {
        this.ctx.logger.warn(`The schedule registry lost this instance's declarations (${await this.whyLost()}): publishing them again`);
        await this.publish();
      }
      this.lastBeatAt = Date.now();
      this.ctx.beat();
      this.failures.ok();
    } catch (err) {
      this.failures.failed(err);
    }
  }

  /**
   * Why the declared set is gone: Redis restarted or failed over (its run_id changed since we
   * published), its TTL ran out while our heartbeats could not reach Redis, or it was deleted.
   */
  private async whyLost(): Promise<string> {
    const silentMs = Date.now() - this.lastBeatAt;
    const ttlMs = this.ctx.heartbeatMs * 3;
    const now = await this.serverRun();
    if (now.runId !== undefined && this.runId !== undefined && now.runId !== this.runId) {
      return `Redis restarted or failed over ${now.uptimeS ?? '?'} s ago without this data: no persistence, or it was not saved`;
    }
    if (silentMs >= ttlMs) return `no heartbeat reached Redis for ${silentMs} ms, longer than their TTL of ${ttlMs} ms`;
    return 'their key was deleted: FLUSHDB, eviction or an operator';
  }

  /** The Redis server's run_id (new at every start) and uptime; unknown on a cluster (INFO goes to any node) or when INFO fails. */
  private async serverRun(): Promise<{ runId?: string; uptimeS?: number }> {
    if ((this.ctx.client as { isCluster?: boolean }).isCluster) return {};
    try {
      const info = await this.ctx.client.info('server');
      const uptime = /uptime_in_seconds:(\d+)/.exec(info)?.[1];
      return { runId: /run_id:(\w+)/.exec(info)?.[1], uptimeS: uptime === undefined ? undefined : Number(uptime) };
    } catch {
      return {};
    }
  }

  /** Names declared by at least one live instance (seen within 3 heartbeats), plus our own. */
  async liveNames(): Promise<Set<string>> {
    const { client, keys } = this.ctx;
    const since = this.ctx.now() - this.ctx.heartbeatMs * 3;
    const ids = await client.zrangebyscore(keys.instances, since, '+inf');
    const names = ids.length ? await client.sunion(...ids.map((id) => keys.declared(id))) : [];
    return new Set([...names, ...this.declared.keys()]);
  }

  /** Marks each entry live (runtime, or declared by a live instance) or orphaned. */
  async refreshLiveness(entries: () => Iterable<LiveEntry>): Promise<void> {
    const live = await this.liveNames();
    for (const e of entries()) this.setLive(e, e.stored.runtime || live.has(e.stored.name));
  }

  /** Sets an entry's liveness, logging when it becomes orphaned and when it is declared again. */
  setLive(e: LiveEntry, live: boolean): void {
    if (!live && !this.orphanLogged.has(e.stored.name)) {
      this.orphanLogged.add(e.stored.name);
      this.ctx.logger.warn(`Schedule is orphaned: no live instance declares it; it does not fire (schedule=${e.stored.name})`);
    } else if (live && this.orphanLogged.delete(e.stored.name)) {
      this.ctx.logger.log(`Schedule is declared again; it fires (schedule=${e.stored.name})`);
    }
    e.live = live;
  }
}
