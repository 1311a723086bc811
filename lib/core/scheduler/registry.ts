/**
 * The schedule registry in Redis: this instance's declarations (published with
 * register-schedules.lua, kept alive by its heartbeat), which schedules a live instance declares
 * (an undeclared one is orphaned and does not fire), and the admin API on the registry, callable
 * without a running Scheduler.
 */
import { randomUUID } from 'node:crypto';
import { DuplicateScheduleError, ScheduleNotFoundError } from '../errors.js';
import { FailureLog, type ChronosLogger } from '../logger.js';
import { encodeMeta, type TaskMeta } from '../queue/codec.js';
import type { RedisClient } from '../redis/connection.js';
import { GlobalKeys, QueueKeys, type SchedulerKeys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
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
  await runScript(client, 'schedule-admin', [keys.schedules, keys.version], ['put', stored.name, JSON.stringify(stored)]);
  await client.sadd(new GlobalKeys(namespace).queues, stored.queue); // the Inspector lists its queue from now on
}

/** Removes a schedule from the registry. @throws ScheduleNotFoundError naming it */
export async function removeSchedule(client: RedisClient, keys: SchedulerKeys, name: string): Promise<void> {
  await scheduleAdmin(client, keys, 'delete', name);
}

/** Pauses a schedule fleet-wide (its triggers are skipped while paused). @throws ScheduleNotFoundError naming it */
export async function pauseSchedule(client: RedisClient, keys: SchedulerKeys, name: string): Promise<void> {
  await scheduleAdmin(client, keys, 'pause', name);
}

/** Resumes a paused schedule. @throws ScheduleNotFoundError naming it */
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
  const meta: TaskMeta = { r: 0, m: s.maxRetry, t: s.timeoutMs, e: nowMs, s: name, tr: nowMs };
  await client.xadd(queueKeys.stream, '*', 'id', id, 'type', s.type, 'payload', s.payload, 'meta', encodeMeta(meta));
  await client.sadd(new GlobalKeys(namespace).queues, s.queue);
  return id;
}

async function scheduleAdmin(client: RedisClient, keys: SchedulerKeys, op: 'delete' | 'pause' | 'resume', name: string): Promise<void> {
  const [done] = await runScript<[number, number]>(client, 'schedule-admin', [keys.schedules, keys.version], [op, name]);
  if (done === 0) throw new ScheduleNotFoundError(name);
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

  /** Publishes the declared schedules (register-schedules.lua) and lists their queues. */
  async publish(): Promise<void> {
    const { client, keys, instanceId } = this.ctx;
    const local = this.ctx.trustedLocalNow();
    const args: string[] = [instanceId, String(this.ctx.heartbeatMs * 3), local === undefined ? '' : String(local)];
    for (const s of this.declared.values()) args.push(s.name, JSON.stringify(s));
    await runScript(client, 'register-schedules', [keys.schedules, keys.version, keys.instances, keys.declared(instanceId)], args);
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
      const [ok] = await runScript<[number, number]>(
        client,
        'heartbeat',
        [keys.instances, keys.declared(instanceId)],
        [instanceId, heartbeatMs * 3, this.declared.size > 0 ? '1' : '0'],
      );
      if (ok === 0) {
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
