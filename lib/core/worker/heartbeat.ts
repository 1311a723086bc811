import { hostname } from 'node:os';
import { DEFAULTS } from '../runtime/defaults.js';
import { SlotPipeline } from '../redis/cluster.js';
import type { RedisClient } from '../redis/connection.js';
import type { GlobalKeys } from '../redis/keys.js';
import type { ConsumedQueue } from '../fetch/consumer.js';
import { engineTime } from '../runtime/time.js';

/**
 * A server's task counters since start: the ack batcher counts the processed tasks (acks written),
 * the executor the failed attempts (a handler's failure, and each bounce and the dead end of a task
 * without a handler here, as the queue's daily `failed` counts them); the heartbeat and the stop message read them.
 */
export class TaskCounters {
  processed = 0;
  failed = 0;
}

/** Most running tasks a heartbeat names with their start (the info key stays small at any concurrency). */
export const RUNNING_SINCE_MAX = 500;

/**
 * A worker server's heartbeat in Redis (for listings): `<ns>:server:<id>` (its info as JSON) and its
 * score in `<ns>:servers` (when its heartbeat expires: three heartbeats on, epoch ms), written every
 * `DEFAULTS.serverHeartbeatMs` and removed at shutdown. This is what the Inspector lists; whether a
 * server is alive is decided by its liveness (liveness.ts: `<ns>:live` and its liveness channel).
 * The info key lives `DEFAULTS.serverInfoKeepMs` (24 h) past the last beat, not three beats: a server
 * that stops beating (SIGSTOP, hung, a host gone) while it holds entries stays listed, overdue, until
 * they are handed on (fleet.ts `servers`); before, its info expired 15 s after its last beat and its
 * tasks showed "active" under a server nobody listed. Rows of `servers` whose info expired are pruned by
 * a beat at most once a minute (`DEFAULTS.serverPruneMs`).
 */
export class Heartbeat {
  private readonly startedAt = engineTime.now();
  /** When the last beat pruned `servers` (local epoch ms); -Infinity before the first. */
  private prunedAt = -Infinity;

  private readonly client: RedisClient;
  private readonly globalKeys: GlobalKeys;
  private readonly id: string;
  private readonly queues: readonly ConsumedQueue[];
  private readonly config: { readonly strictPriority: boolean; readonly concurrency: number };
  private readonly counters: TaskCounters;
  private readonly slots: {
    readonly activeCount: number;
    readonly running: readonly { readonly id: string; readonly startedAt: number }[];
  };

  constructor(o: {
    client: RedisClient;
    globalKeys: GlobalKeys;
    /** The server's id. */
    id: string;
    queues: readonly ConsumedQueue[];
    config: { readonly strictPriority: boolean; readonly concurrency: number };
    /** The server's task counters (read at each beat). */
    counters: TaskCounters;
    /** The slot table: how many handlers run now, and which (the Inspector's `startedAt` of each, the first {@link RUNNING_SINCE_MAX}). */
    slots: { readonly activeCount: number; readonly running: readonly { readonly id: string; readonly startedAt: number }[] };
  }) {
    ({ client: this.client, globalKeys: this.globalKeys, id: this.id, queues: this.queues } = o);
    ({ config: this.config, counters: this.counters, slots: this.slots } = o);
  }

  /**
   * Writes the info key and the `<ns>:servers` score (one pipeline); at the first beat and then at most
   * every `DEFAULTS.serverPruneMs` (a minute) it also prunes the rows of servers whose info expired
   * (a day after their last beat).
   * @throws the first command's error when Redis refused or failed it.
   */
  async beat(): Promise<void> {
    const ttl = DEFAULTS.serverHeartbeatMs * 3;
    const keep = DEFAULTS.serverInfoKeepMs;
    const { processed, failed } = this.counters;
    const { activeCount: active, running } = this.slots;
    const runningSince = Object.fromEntries(running.slice(0, RUNNING_SINCE_MAX).map((r) => [r.id, r.startedAt]));
    const info = JSON.stringify({
      id: this.id,
      host: hostname(),
      pid: process.pid,
      queues: Object.fromEntries(this.queues.map((q) => [q.name, q.weight])),
      strictPriority: this.config.strictPriority,
      concurrency: this.config.concurrency,
      active,
      processed,
      failed,
      startedAt: this.startedAt,
      heartbeatAt: engineTime.now(),
      runningSince,
    });
    // one round trip, no MULTI/EXEC: a reader between them sees the previous beat's values. A
    // SlotPipeline: while the global slot migrates, a command on a key that left is refused (ASK) beside
    // those that ran, and is sent again (a plain pipeline threw the ASK: no beat while the slot moved)
    const now = engineTime.now();
    const [server, servers] = [this.globalKeys.server(this.id), this.globalKeys.servers];
    const pipe = new SlotPipeline(this.client)
      .add(server, (p) => p.set(server, info, 'PX', keep))
      .add(servers, (p) => p.zadd(servers, now + ttl, this.id));
    const prune = now - this.prunedAt >= DEFAULTS.serverPruneMs;
    if (prune) pipe.add(servers, (p) => p.zremrangebyscore(servers, '-inf', now + ttl - keep));
    const replies = await pipe.exec();
    const error = replies.find(([err]) => err)?.[0];
    if (error) throw error;
    if (prune) this.prunedAt = now;
  }

  /**
   * Removes another server, found dead by its liveness, from `<ns>:servers` and deletes its info key
   * (so the Inspector stops listing it). Not a MULTI: while the global slot migrates with the two keys
   * on different nodes, no node runs it (each refuses the key it lacks), and it failed until the
   * migration ended; the Inspector skips a row whose info is gone, so the order is enough.
   * @throws the first command's error when Redis refused or failed it.
   */
  async forget(serverId: string): Promise<void> {
    const [servers, info] = [this.globalKeys.servers, this.globalKeys.server(serverId)];
    const replies = await new SlotPipeline(this.client)
      .add(servers, (p) => p.zrem(servers, serverId))
      .add(info, (p) => p.del(info))
      .exec();
    const error = replies.find(([err]) => err)?.[0];
    if (error) throw error;
  }

  /** Removes this server from `<ns>:servers` and deletes its info key; a Redis that is gone is ignored (the key expires). */
  async remove(): Promise<void> {
    try {
      await this.client.zrem(this.globalKeys.servers, this.id);
      await this.client.del(this.globalKeys.server(this.id));
    } catch {
      /* Redis gone: the heartbeat key expires by itself */
    }
  }
}
