import { DEFAULTS } from '../runtime/defaults.js';
import { ChronosStateError } from '../runtime/errors.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { closeClient, duplicateConnection, type RedisClient } from '../redis/connection.js';
import type { GlobalKeys } from '../redis/keys.js';
import { presenceScript, redisRunScript } from '../redis/commands/recovery.js';
import { engineTime } from '../runtime/time.js';

/** Shortest presence tick period, ms (the period of earlier versions, kept with a short visibility timeout). */
const MIN_TICK_MS = 1000;
/** A confirming tick comes this much after the grace (Node timers and the Redis-time estimate may be early), ms. */
const CONFIRM_SLACK_MS = 50;

/** What one presence tick found. */
export interface PresenceView {
  /** Servers found dead by their liveness and not handled yet: reclaim their entries now, then call {@link Liveness.handled}. */
  readonly dead: readonly string[];
  /**
   * True when another server is overdue (its main loop stopped ticking: stopped, hung, busy) and its
   * entries may be crossing the visibility timeout now: every queue wants the visibility-timeout sweep.
   */
  readonly sweepAll: boolean;
  /**
   * How long after it was sent Redis ran the tick, ms: Redis time when it ran − this process's
   * estimate of it when it was sent (never ahead of it); 0 before any estimate. Long when Redis (or the
   * link) stalled: the visibility-timeout sweep then waits (redis-stall.ts).
   */
  readonly lateMs: number;
}

/**
 * The liveness of the worker servers of a namespace, as one server sees it.
 *
 * The rule. Each server keeps a dedicated subscriber connection on its own channel
 * (`<ns>:{<ns>:global}:alive:<id>`, nothing is published on it) for as long as its process lives, and
 * ticks every {@link Liveness.tickMs} (`DEFAULTS.livenessCheckMs`, 2.5 s; a quarter of a short visibility
 * timeout, at least 1 s) from its main event loop (presence.lua): its score in `<ns>:live` becomes
 * Redis now + `staleAfterMs` (two ticks, or half the visibility timeout when that is longer, at most
 * `DEFAULTS.livenessStaleMs`), and it reads the others in one call.
 * - **Dead**: another server's channel had no subscriber in ticks at least `DEFAULTS.livenessGraceMs`
 *   (750 ms) apart, Redis time: a tick that finds a channel silent asks for a confirming tick that
 *   much later ({@link Liveness.nextTickInMs}), so a death is found about 1–3.3 s after it (at most a tick
 *   plus the grace) at one tick's cost while nobody dies. When a process dies
 *   (SIGKILL, OOM, a crash) the kernel closes its sockets and Redis drops its subscription at once; its
 *   entries are reclaimed at once (reclaim-consumer.lua).
 * - **Alive but unresponsive**: a stopped (SIGSTOP), hung or busy process keeps its sockets, so it
 *   keeps its subscription and is never dead; its score goes overdue instead, which only turns on the
 *   visibility-timeout sweep (`sweepAll`): its entries are reclaimed once idle past the visibility
 *   timeout.
 * - **Redis restarted or failed over**: this server's own connection drops and reconnects; for
 *   `DEFAULTS.livenessReconnectGraceMs` (5 s) after that nobody is judged, so every live server has
 *   time to reconnect and resubscribe (ioredis resubscribes by itself). A server that starts judges
 *   once the Redis process has been answering the servers that long: since the first server started
 *   under it (redis-run.lua; Redis's uptime would count the time it spent loading its data, and
 *   whole seconds), or since Redis's own start when no server recorded one. A live server still
 *   away after the grace (reconnect attempts more than ~5 s apart) is taken for dead: its tasks run
 *   again elsewhere (at least once).
 * - **Redis Cluster** (Redis ≥ 7.0): the channel is a shard channel (`SSUBSCRIBE`, one subscriber
 *   connection per master), which lives on the master that owns its slot; it carries the hash tag
 *   `{<ns>:global}` of `<ns>:live`, so presence.lua runs on that master and counts its subscribers
 *   with `PUBSUB SHARDNUMSUB`. The rule is the same as above. A master that fails over (or a slot
 *   that moves) loses the shard subscriptions; ioredis makes them again on the new owner. So each
 *   tick also counts the observer's own channel: while its own subscription is missing there, nobody
 *   is judged, and once it is back nobody is judged for `DEFAULTS.livenessReconnectGraceMs`, so the
 *   other servers have time to subscribe again. On a cluster of Redis < 7.0 nobody is judged: deaths
 *   are found by the overdue score and the visibility timeout.
 *
 * A host that vanishes without closing its sockets (power loss, a network partition) keeps its
 * subscription until Redis's tcp-keepalive drops it: until then it is overdue, and its entries come
 * back after the visibility timeout.
 */
export class Liveness {
  private sub?: RedisClient;
  /** How deaths are judged: liveness channels (one Redis, Sentinel), shard channels (Cluster, Redis ≥ 7.0), or not at all. */
  private mode: 'channels' | 'sharded' | 'off' = 'off';
  /** Sharded: since when (Redis time, epoch ms) this server's own subscription has been seen; -Infinity from the start on, undefined while missing. */
  private ownSince?: number;
  /** When the observer's connection last became ready, epoch ms (local); bumps {@link epoch}. */
  private readyAt = engineTime.now() - DEFAULTS.livenessReconnectGraceMs;
  private epoch = 0;
  /** Server id → Redis time (epoch ms) of the first tick that found its channel without a subscriber. */
  private readonly silentSince = new Map<string, number>();
  /** Dead servers whose entries this server has reclaimed: not reported again unless they come back. */
  private readonly done = new Set<string>();
  private readonly staleAfterMs: number;
  /** This server's presence tick period, ms (see the class doc). */
  readonly tickMs: number;
  /** Redis time (epoch ms) of the last tick's reply; -Infinity before the first. */
  private lastNowMs = -Infinity;
  /** Until when this server counts as the namespace's only worker server (local base, epoch ms): see {@link alone}. */
  private aloneUntil = -Infinity;
  private readonly onReady = () => {
    this.readyAt = engineTime.now();
    this.epoch++;
    this.silentSince.clear();
  };

  constructor(
    private readonly client: RedisClient,
    private readonly keys: GlobalKeys,
    private readonly id: string,
    private readonly opts: { readonly visibilityTimeout: number; readonly recoverInterval: number },
    private readonly logger: ChronosLogger,
  ) {
    // late by this much means the main loop stopped: at most half the visibility timeout, at least 2 ticks; the
    // tick is short enough that an overdue score is seen before a stopped server's entries cross the timeout
    const stale = Math.min(DEFAULTS.livenessStaleMs, Math.floor(opts.visibilityTimeout / 2));
    this.tickMs = Math.min(DEFAULTS.livenessCheckMs, Math.max(MIN_TICK_MS, Math.floor(stale / 2)));
    this.staleAfterMs = Math.max(2 * this.tickMs, stale);
  }

  /** True when this server judges deaths (one Redis, Sentinel, and a cluster of Redis ≥ 7.0; see the class doc); known after {@link open}. */
  get judges(): boolean {
    return this.mode !== 'off';
  }

  /** Subscribes the liveness connection (a shard channel on a cluster of Redis ≥ 7.0) and writes the first presence score. */
  async open(): Promise<void> {
    this.client.on('ready', this.onReady);
    const info = await this.client.info('server');
    const channel = this.keys.alive(this.id);
    if ((this.client as { isCluster?: boolean }).isCluster) {
      if (Number(/redis_version:(\d+)/.exec(info)?.[1] ?? 0) >= 7) {
        this.mode = 'sharded';
        this.readyAt = engineTime.now() - DEFAULTS.livenessReconnectGraceMs; // the own-channel rule guards a failover instead
        this.ownSince = -Infinity;
        const sub = (this.sub = duplicateConnection(this.client, { shardedSubscribers: true, subscriber: true }));
        await sub.ssubscribe(channel); // on the master of the channel's slot; ioredis subscribes again after a failover
      }
    } else {
      this.mode = 'channels';
      // the reconnect grace counts from when this Redis process began answering the servers (redis-run.lua): a server
      // started long after it judges at once; Redis's uptime would count its loading time, and whole seconds
      const runId = /run_id:(\w+)/.exec(info)?.[1] ?? '';
      const upMs = Number(/uptime_in_seconds:(\d+)/.exec(info)?.[1] ?? 0) * 1000;
      const run = await redisRunScript(this.client, this.keys, { runId, uptimeMs: upMs });
      this.readyAt = engineTime.now() - Math.min(Math.max(0, run.nowMs - run.sinceMs), DEFAULTS.livenessReconnectGraceMs);
      const sub = (this.sub = duplicateConnection(this.client, { subscriber: true }));
      // ioredis resubscribes after a reconnect unless the app's client says autoResubscribe: false; a second SUBSCRIBE is harmless
      sub.on('ready', () => void sub.subscribe(channel).catch(() => {}));
      await sub.subscribe(channel);
    }
    await this.tick();
  }

  /**
   * Checked at start, before anything is written under this id: a server that starts with an id a
   * live server has (a fixed `serverId` given twice, or a restart before the previous process
   * ended) would take that server's running tasks back and both would run them. One Redis and
   * Sentinel only (its channel's subscribers; not on a cluster).
   * @throws ChronosStateError when a live server holds this id's liveness channel.
   */
  async refuseIfInUse(): Promise<void> {
    if ((this.client as { isCluster?: boolean }).isCluster) return;
    const channel = this.keys.alive(this.id);
    const [, subscribers] = (await this.client.pubsub('NUMSUB', channel)) as [string, number];
    if (Number(subscribers) === 0) return;
    throw new ChronosStateError(
      `Server id "${this.id}" is in use: a live server holds its liveness channel (${channel}). Two servers must not share ` +
        `a serverId (the second would take the first's running tasks and both would run them): give each its own id, or ` +
        `stop the other first (a process that vanished without closing its connection holds it until Redis drops that, by tcp-keepalive)`,
    );
  }

  /**
   * One presence tick: renews this server's score, and reports the servers found dead (not yet
   * handled) and whether an overdue server wants the visibility-timeout sweep of every queue.
   */
  async tick(): Promise<PresenceView> {
    const epoch = this.epoch;
    const sentAt = engineTime.bestRttMs < Infinity ? engineTime.now() : undefined; // Redis time at the send, if estimated yet
    const sent = engineTime.localNow();
    const r = await presenceScript(this.client, this.keys, {
      serverId: this.id,
      staleAfterMs: this.staleAfterMs,
      keepMs: DEFAULTS.livenessKeepMs,
      judge: this.mode === 'sharded' ? 'sharded' : this.mode === 'channels',
      register: true,
    });
    engineTime.sample(sent, r.exactNowMs, engineTime.localNow()); // a sub-ms sample of Redis time every tick (the forwarder's rounds are rare when idle)
    this.lastNowMs = r.nowMs;
    const lateMs = sentAt === undefined ? 0 : Math.max(0, r.nowMs - sentAt);
    this.aloneUntil = r.others === 0 ? engineTime.localNow() + this.staleAfterMs : -Infinity;
    const o = this.opts;
    // an overdue server's entries may pass the visibility timeout from (its last tick + VT): sweep until two sweeps after that
    const window = o.visibilityTimeout - this.staleAfterMs + 2 * o.recoverInterval + this.tickMs;
    const sweepAll = r.overdue.some((s) => !this.done.has(s.id) && s.overdueMs <= window);
    const silent = new Set(r.silent);
    for (const id of this.done) if (!silent.has(id)) this.done.delete(id); // back (it was not dead) or forgotten
    for (const id of this.silentSince.keys()) if (!silent.has(id)) this.silentSince.delete(id);
    if (
      epoch !== this.epoch ||
      engineTime.now() - this.readyAt < DEFAULTS.livenessReconnectGraceMs ||
      !this.ownSeen(r.nowMs, r.ownSubscribers)
    ) {
      this.silentSince.clear(); // Redis may have restarted: live servers may still be reconnecting
      return { dead: [], sweepAll, lateMs };
    }
    const dead: string[] = [];
    for (const id of silent) {
      if (this.done.has(id)) continue;
      const since = this.silentSince.get(id);
      if (since === undefined) this.silentSince.set(id, r.nowMs);
      else if (r.nowMs - since >= DEFAULTS.livenessGraceMs) dead.push(id);
    }
    if (dead.length > 0) this.logger.warn(`Worker server(s) gone: their connection to Redis closed (servers=${dead.join(',')})`);
    return { dead, sweepAll, lateMs };
  }

  /**
   * True when the last presence tick, less than `staleAfterMs` ago, found no other worker server in
   * the namespace (none live, none overdue within `keepMs`): this server is then the only consumer
   * of its queues, and may hold more early trigger tasks than its concurrency (fetch/slots.ts). A
   * server that starts meanwhile is seen at the next tick (at most {@link tickMs} later).
   */
  get alone(): boolean {
    return engineTime.localNow() < this.aloneUntil;
  }

  /**
   * True during the reconnect grace: less than `DEFAULTS.livenessReconnectGraceMs` (5 s) since this
   * server's connection came back, or (a server that starts) since the Redis process began answering
   * the servers (see the class doc: a restart). The holders of entries may
   * still be reconnecting then: their claim renewals and acks, held back by the outage, land late, and an
   * entry's idle time (Redis's, which ran on while nobody could renew) overstates how long its holder
   * has been silent. So no entry is judged by its idle time during the grace (the worker's `recover`
   * job waits it out), as no server is judged dead by its channel.
   */
  get settling(): boolean {
    return engineTime.now() - this.readyAt < DEFAULTS.livenessReconnectGraceMs;
  }

  /**
   * When the next presence tick is due, ms from now: {@link tickMs}, or sooner when the last tick
   * found a channel silent for the first time (the tick that can confirm its death comes
   * `DEFAULTS.livenessGraceMs` after it, Redis time).
   */
  nextTickInMs(): number {
    let wait = this.tickMs;
    for (const since of this.silentSince.values()) {
      const confirmAt = since + DEFAULTS.livenessGraceMs;
      // one past its grace already was reported (and is retried at the next regular tick when its reclaim failed)
      if (confirmAt > this.lastNowMs) wait = Math.min(wait, confirmAt - this.lastNowMs + CONFIRM_SLACK_MS);
    }
    return wait;
  }

  /**
   * Sharded mode: whether this server's own shard subscription has been seen on the node that ran
   * the tick for the reconnect grace (a failover or a slot move drops it; see the class doc).
   * Always true in the other modes.
   */
  private ownSeen(nowMs: number, ownSubscribers: number): boolean {
    if (this.mode !== 'sharded') return true;
    if (ownSubscribers === 0) {
      this.ownSince = undefined;
      return false;
    }
    this.ownSince ??= nowMs;
    return nowMs - this.ownSince >= DEFAULTS.livenessReconnectGraceMs;
  }

  /** Marks a dead server's entries as reclaimed by this server (in all its queues): it is not reported again. */
  handled(serverId: string): void {
    this.done.add(serverId);
    this.silentSince.delete(serverId);
  }

  /**
   * Removes this server's presence (with `remove`, at a shutdown after running) and closes the
   * liveness connection; a Redis that is gone is ignored.
   */
  async close(remove = true): Promise<void> {
    this.client.off('ready', this.onReady);
    try {
      if (remove) await this.client.zrem(this.keys.live, this.id);
    } catch {
      /* Redis gone: the score expires and is dropped by the others' ticks */
    }
    if (this.sub) await closeClient(this.sub);
  }
}
