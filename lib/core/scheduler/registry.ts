/**
 * The schedule registry in Redis: this instance's declarations (its names recorded once per
 * digest with declare-schedules.lua, then its definitions published in chunks with
 * register-schedules.lua; kept alive by its heartbeat, one key per instance), which schedules a
 * live instance declares (an undeclared one is orphaned and does not fire; live-names.ts), and the
 * fences of changed schedules. The operator's changes (add, pause, resume, remove, trigger) are
 * written by lib/core/admin/schedule-acts.ts only, for the Inspector and the Scheduler alike.
 *
 * Every change (pause, resume, remove, a new definition) is two single-slot steps, in this order:
 * the registry change in the slot of the schedule's shard, which takes a new generation, marks the
 * schedule in the shard's due index and is announced on the changes channel (the shard's leader
 * looks at it at once), then {@link raiseFences} in the slot of the queue
 * the schedule targeted, beside its lastFired. Once the call resolves, fire.lua refuses any trigger
 * planned under the old state, even by a leader that missed the notice.
 */
import { ChronosStateError, DuplicateScheduleError } from '../runtime/errors.js';
import { FailureLog, type ChronosLogger } from '../runtime/logger.js';
import { SlotPipeline } from '../redis/cluster.js';
import { explainFailure, type RedisClient } from '../redis/connection.js';
import {
  declareSchedulesScript,
  dropRunsScript,
  fenceSchedulesScript,
  heartbeatScript,
  registerSchedulesScript,
  type Fence,
} from '../redis/commands/schedule.js';
import { byShard, GlobalKeys, QueueKeys, SchedulerKeys, shardKeysFor } from '../redis/keys.js';
import { markDueScript } from '../redis/commands/shard-due.js';
import type { StoredSchedule } from './definition.js';
import { LiveNames, namesDigest, type LiveRead } from './live-names.js';
import { encodeStored } from './stored-form.js';
import { engineTime } from '../runtime/time.js';

/**
 * Definitions per register-schedules.lua call. A new definition costs the script ~25 µs of Redis CPU
 * (decode, indexes, due index, encode): 100 took 2.5 ms of CPU per call, and up to 14.9 ms of wall
 * time by SLOWLOG when the machine was busy (w10, 10,000 schedules × 3; the bound is 10 ms); 50 keep
 * a call near 1 ms of CPU.
 */
export const REGISTER_CHUNK = 50;
/** Schedules per fence-schedules.lua call (one HMGET and one HSET each). */
export const FENCE_CHUNK = 250;
/** Names per SADD while filling a names set. */
const NAMES_CHUNK = 1000;

// ------------------------------------------------------------------ fences

/**
 * Deletes the maxRuns counters (keys.ts `runs`) that changes left behind, in the slot of the queue
 * each schedule targeted before (`fences`): when it moved to another queue (its count starts afresh
 * there), or when its new definition has no maxRuns (nothing counts meanwhile, so a maxRuns given
 * later starts afresh too, even one equal to the old: trial 29). README "Jitter, start and end,
 * maxRuns". drop-runs.lua per queue, {@link FENCE_CHUNK} schedules per call; none when there is
 * none. Run after the fences, so that no trigger planned under the old definition counts again. A
 * counter is deleted only while no later change of its schedule was fenced since (a writer late
 * with this step leaves alone the counter of a newer definition with a maxRuns).
 * @param now the queue and maxRuns a schedule has now (undefined: not known here, left alone)
 */
export async function dropStaleRuns(
  client: RedisClient,
  namespace: string,
  fences: readonly Fence[],
  now: (schedule: string) => Pick<StoredSchedule, 'queue' | 'maxRuns'> | undefined,
): Promise<void> {
  const stale = fences.filter((f) => {
    const def = f.queue === '' ? undefined : now(f.schedule);
    return def !== undefined && (def.queue !== f.queue || def.maxRuns === undefined);
  });
  await Promise.all(perQueueChunks(namespace, stale, (keys, chunk) => dropRunsScript(client, keys, chunk)));
}

/** One call per {@link FENCE_CHUNK} fences of a queue, all started at once (pipelined); the calls' promises. */
function perQueueChunks<T>(
  namespace: string,
  fences: readonly Fence[],
  call: (keys: QueueKeys, chunk: [string, number][]) => Promise<T>,
): Promise<T>[] {
  const byQueue = new Map<string, [string, number][]>();
  for (const f of fences) {
    const list = byQueue.get(f.queue);
    if (list) list.push([f.schedule, f.generation]);
    else byQueue.set(f.queue, [[f.schedule, f.generation]]);
  }
  const calls: Promise<T>[] = [];
  for (const [queue, list] of byQueue) {
    const keys = new QueueKeys(namespace, queue);
    for (let i = 0; i < list.length; i += FENCE_CHUNK) calls.push(call(keys, list.slice(i, i + FENCE_CHUNK)));
  }
  return calls;
}

/**
 * Raises the generations of changed schedules in their queues' slots: fence-schedules.lua per
 * queue, {@link FENCE_CHUNK} schedules per call, all calls pipelined. A changed schedule whose
 * next trigger was decided ahead of its instant under the old state (enqueued: its task retracted
 * while it waits in the scheduled set; or refused by maxRuns) has its lastFired moved back to now
 * there; those schedules are then marked due in their shards (mark-due.lua) and the shards
 * announced, so their leaders plan the trigger again under the new state even when they looked
 * at the change before.
 * @param by who changed them, for the history records of retracted tasks ("" = not named)
 * @returns the names of the schedules whose lastFired was moved back
 */
export async function raiseFences(client: RedisClient, namespace: string, fences: readonly Fence[], by = ''): Promise<string[]> {
  const calls = perQueueChunks(namespace, fences, (keys, chunk) => fenceSchedulesScript(client, keys, chunk, by));
  const rewound = (await Promise.all(calls)).flatMap((r) => r.rewound);
  if (rewound.length === 0) return rewound;
  const shards = byShard(namespace, rewound, (name) => name);
  const marks: Promise<number>[] = [];
  for (const [keys, names] of shards)
    for (let i = 0; i < names.length; i += FENCE_CHUNK) marks.push(markDueScript(client, keys, names.slice(i, i + FENCE_CHUNK)));
  await Promise.all(marks);
  await client.publish(new SchedulerKeys(namespace).changesChannel, [...shards.keys()].map((k) => k.shard).join(','));
  return rewound;
}

// ------------------------------------------------------------------ declarations and liveness

/** A schedule whose liveness the leader tracks. */
export interface LiveEntry {
  stored: Pick<StoredSchedule, 'name' | 'runtime'>;
  live: boolean;
  /** While orphaned: since when (epoch ms, Redis time; orphans.ts). */
  orphanedSince?: number;
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
  /** Whether declared definitions are written in the compact stored form (stored-form.ts; `compactSchedules`). */
  compactSchedules: boolean;
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
  /** A beat is in flight: the next waits for it (beats piled up on a silent socket would each report the loss when it heals). */
  private beating = false;
  /** When a heartbeat last reached Redis (local clock, epoch ms). */
  private lastBeatAt = engineTime.now();
  /** The run_id of the Redis server the declarations were last published to. */
  private runId?: string;
  /** The digest of the declared names (live-names.ts); undefined while none are declared. */
  private digest?: string;
  /** The leader's view of the names live instances declare. */
  private readonly live: LiveNames;
  /** Health of the heartbeat loop. */
  readonly failures: FailureLog;

  constructor(private readonly ctx: DeclarationsContext) {
    this.failures = new FailureLog(ctx.logger, 'Scheduler heartbeat', (err) => explainFailure(ctx.client, err));
    this.live = new LiveNames(ctx.client, ctx.keys);
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
   * Publishes the declared schedules: records their names (declare-schedules.lua; the names set of
   * their digest is filled only if no instance made it yet), then the definitions in chunks of
   * {@link REGISTER_CHUNK} of one shard (register-schedules.lua, pipelined: a changed definition
   * replaces the stored one and takes effect from now), fences the replaced ones, announces the
   * change once (naming the shards that changed) and lists their queues. The names come first, so
   * a leader never sees a new schedule undeclared. `again` (the heartbeat found the declarations
   * lost): only definitions not stored at all are written, so an instance that was paused or cut
   * off does not put its definitions back over ones registered since it started (a newer version
   * in a rolling deploy: the last to *register* wins, a re-publish is not a registration).
   */
  async publish(again = false): Promise<void> {
    const { client, keys } = this.ctx;
    const local = this.ctx.trustedLocalNow();
    const names = new Set(this.declared.keys());
    this.digest = names.size > 0 ? namesDigest(names) : undefined;
    this.live.own(this.digest, names);
    await this.declareNames(names, local);
    const calls: { shard: number; call: ReturnType<typeof registerSchedulesScript> }[] = [];
    for (const [shard, defs] of byShard(this.ctx.namespace, this.declared.values(), (s) => s.name)) {
      for (let i = 0; i < defs.length; i += REGISTER_CHUNK) {
        const definitions = defs
          .slice(i, i + REGISTER_CHUNK)
          .map((s) => [s.name, s.fp, encodeStored(s, this.ctx.compactSchedules)] as const);
        const call = registerSchedulesScript(client, shard, { nowMs: local, definitions, missingOnly: again });
        call.catch(() => {}); // handled by the Promise.all below; not "unhandled" while the loop yields
        calls.push({ shard: shard.shard, call });
        // each chunk is on the wire already (pipelined); let other work run between chunks (50,000 schedules: 500 of them)
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const changedShards = new Set<number>();
    const fences: Fence[] = [];
    const results = await Promise.all(calls.map((c) => c.call));
    results.forEach((r, i) => {
      if (r.changed > 0) changedShards.add(calls[i].shard);
      fences.push(...r.fences);
    });
    await raiseFences(client, this.ctx.namespace, fences, this.ctx.instanceId);
    await dropStaleRuns(client, this.ctx.namespace, fences, (name) => this.declared.get(name));
    if (changedShards.size > 0) await client.publish(keys.changesChannel, [...changedShards].join(','));
    this.lastBeatAt = engineTime.now();
    this.runId = (await this.serverRun()).runId;
    if (this.declared.size > 0) {
      const queues = new Set([...this.declared.values()].map((s) => s.queue));
      await client.sadd(new GlobalKeys(this.ctx.namespace).queues, ...queues);
    }
  }

  /**
   * Records this instance's declaration. Unless the names set of its digest exists, fills a
   * building set first (SADD in chunks of {@link NAMES_CHUNK}, one pipeline); once more if the set
   * vanished meanwhile. @throws ChronosStateError when it keeps vanishing (Redis keeps losing data)
   */
  private async declareNames(names: ReadonlySet<string>, local: number | undefined): Promise<void> {
    const { client, keys, instanceId } = this.ctx;
    const ttl = this.ctx.heartbeatMs * 3;
    const digest = this.digest;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (digest !== undefined && (attempt > 0 || (await client.exists(keys.names(digest))) === 0)) {
        const building = keys.namesBuilding(digest, instanceId);
        // a SlotPipeline: a command refused while the slot migrates is sent again (cluster.ts)
        const p = new SlotPipeline(client).add(building, (c) => c.unlink(building));
        const all = [...names];
        for (let i = 0; i < all.length; i += NAMES_CHUNK) {
          const chunk = all.slice(i, i + NAMES_CHUNK);
          p.add(building, (c) => c.sadd(building, ...chunk));
          if (i === 0) p.add(building, (c) => c.pexpire(building, ttl)); // from the first chunk on: a crash midway leaves nothing behind for long
        }
        for (const [err] of await p.exec()) if (err) throw err;
      }
      const r = await declareSchedulesScript(client, keys, instanceId, digest, ttl, local);
      if (r.status === 'declared') return;
    }
    throw new ChronosStateError(
      `The names set of this instance's schedules kept vanishing from Redis while declaring them (instance=${instanceId})`,
    );
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
    if (this.beating) return;
    this.beating = true;
    try {
      const { status } = await heartbeatScript(client, keys, instanceId, heartbeatMs * 3, this.digest);
      if (status === 'declaredLost') {
        this.ctx.logger.warn(`The schedule registry lost this instance's declarations (${await this.whyLost()}): publishing them again`);
        await this.publish(true);
      }
      this.lastBeatAt = engineTime.now();
      this.ctx.beat();
      this.failures.ok();
    } catch (err) {
      this.failures.failed(err);
    } finally {
      this.beating = false;
    }
  }

  /**
   * Why the declared set is gone: Redis restarted or failed over (its run_id changed since we
   * published) without the data, its TTL ran out while our heartbeats could not reach Redis (a
   * restart that kept the data included: the registry of a declared schedule's shard, which has no
   * TTL, is still there), or it was deleted.
   */
  private async whyLost(): Promise<string> {
    const silentMs = engineTime.now() - this.lastBeatAt;
    const ttlMs = this.ctx.heartbeatMs * 3;
    const now = await this.serverRun();
    const ttlRanOut = `no heartbeat reached Redis for ${silentMs} ms, longer than their TTL of ${ttlMs} ms`;
    if (now.runId !== undefined && this.runId !== undefined && now.runId !== this.runId) {
      const restarted = `Redis restarted or failed over ${now.uptimeS ?? '?'} s ago`;
      if (silentMs >= ttlMs && (await this.registryKept())) return `${restarted} with its data, and ${ttlRanOut}`;
      return `${restarted} without this data: no persistence, or it was not saved`;
    }
    if (silentMs >= ttlMs) return ttlRanOut;
    return 'their key was deleted: FLUSHDB, eviction or an operator';
  }

  /** Whether the registry hash of the first declared schedule's shard still exists (false when unknown). */
  private async registryKept(): Promise<boolean> {
    const first = this.declared.keys().next();
    if (first.done) return false;
    try {
      return (await this.ctx.client.exists(shardKeysFor(this.ctx.namespace, first.value).schedules)) === 1;
    } catch {
      return false;
    }
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

  /**
   * Which names a live instance declares (seen within 3 heartbeats, its declaration not expired),
   * plus our own, until when, and which digests stopped being live since the last read:
   * ZRANGEBYSCORE + MGET (+ ZMSCORE when a digest vanished), and an SSCAN of a digest's names only
   * the first time it is seen (live-names.ts). The names set is shared: do not change it.
   */
  readLive(): Promise<LiveRead> {
    return this.live.read(this.ctx.now(), this.ctx.heartbeatMs * 3);
  }

  /** Until when a live instance declares `name` by `read` (epoch ms, Redis time; -Infinity when none does). */
  liveUntilOf(name: string, read: LiveRead): number {
    return this.live.liveUntilOf(name, read);
  }

  /** Sets an entry's liveness, logging when it becomes orphaned and when it is declared again. */
  setLive(e: LiveEntry, live: boolean): void {
    if (!live && !this.orphanLogged.has(e.stored.name)) {
      this.orphanLogged.add(e.stored.name);
      const since = e.orphanedSince === undefined ? '' : `orphanedSince=${e.orphanedSince} `;
      this.ctx.logger.warn(`Schedule is orphaned: no live instance declares it; it does not fire (${since}schedule=${e.stored.name})`);
    } else if (live && this.orphanLogged.delete(e.stored.name)) {
      this.ctx.logger.log(`Schedule is declared again; it fires (schedule=${e.stored.name})`);
    }
    e.live = live;
  }
}
