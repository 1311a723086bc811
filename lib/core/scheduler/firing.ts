/**
 * The leader's firing, per shard (docs/scheduler-shards.md): one loop (shard-loop.ts) for each shard
 * this instance leads, started when its lease is taken and stopped when it is lost; the loops share
 * the fire path (firing-settle.ts), the last liveness read of the code-declared schedules, and the
 * bound on the leader's calls. A registry change's notice names the shards it wrote: their loops
 * tick at once. The leader holds no table of schedules: a tick reads a bounded batch of its shard's
 * due index, so its memory does not grow with the number of schedules.
 */
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger, FailureLog } from '../runtime/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { byShard, shardKeysOf, type SchedulerKeys } from '../redis/keys.js';
import { markDueScript } from '../redis/commands/shard-due.js';
import type { RedisTime } from '../runtime/time.js';
import { FiringShared } from './firing-settle.js';
import { readOrphaned } from './orphans.js';
import type { Declarations } from './registry.js';
import type { LiveRead } from './live-names.js';
import { ShardLoop } from './shard-loop.js';
import type { Signals } from '../runtime/signals.js';

/** What the firing loops work with. */
export interface FiringContext {
  client: RedisClient;
  keys: SchedulerKeys;
  namespace: string;
  instanceId: string;
  logger: ChronosLogger;
  events: EventBus;
  /** Test hook: what is due is decided by a test clock ({@link now}), not Redis time (the time source is not sampled then). */
  trustLocalClock: boolean;
  /** The process's time source: fire round trips are sampled into it. */
  time: RedisTime;
  /** Redis time now (the time source), or the test clock under `trustLocalClock`, epoch ms. */
  now(): number;
  /** Whether this instance still leads a shard (its lease's own clock: checked before each call of its loop). */
  leads(shard: number): boolean;
  /** When this instance's lease on a shard expires in Redis (epoch ms; 0 when it does not hold it): the fence of its fire calls. */
  leaseEnd(shard: number): number;
  /** Whether the scheduler runs (not stopped). */
  running(): boolean;
  declarations: Declarations;
  /** Most fire records kept per schedule, 0–100 (SchedulerOptions.historyLimit; 0: none written). */
  historyLimit: number;
  /** Test signals: `tick.start` (synchronous, before each timer tick) and `tick.done`. */
  signals: Signals;
}

/** The loops of the shards this instance leads; idle while it leads none. */
export class Firing {
  private readonly loops = new Map<number, ShardLoop>();
  private readonly shared: FiringShared;
  /** The last liveness read of the declared schedules (a read in flight, or done). */
  private live?: Promise<LiveRead>;
  /** Re-reads liveness when the earliest liveUntil passes (a declarer died, or its heartbeats lag). */
  private livenessTimer?: NodeJS.Timeout;
  /** Set by {@link halt}: the scheduler is stopping and takes no new work. */
  private halted = false;

  constructor(private readonly ctx: FiringContext) {
    this.shared = new FiringShared(
      ctx,
      (shard) => this.loops.has(shard) && ctx.leads(shard),
      (fresh) => this.liveRead(fresh),
      () => this.refreshLiveness(),
    );
  }

  /** Health of the firing loops. */
  get failures(): FailureLog {
    return this.shared.failures;
  }

  /** True while this instance runs the loop of at least one shard. */
  get leading(): boolean {
    return this.loops.size > 0;
  }

  /** The shards whose loops run here, ascending. */
  get shards(): number[] {
    return [...this.loops.keys()].sort((a, b) => a - b);
  }

  /** Shards were taken (each with its term): start their loops (each ticks at once: the catch-up policy decides about any gap). */
  acquired(taken: ReadonlyArray<{ shard: number; term: number }>): void {
    if (this.halted || taken.length === 0) return;
    if (this.loops.size === 0) this.shared.bound.begin();
    const all = shardKeysOf(this.ctx.namespace);
    for (const { shard, term } of taken) {
      this.loops.get(shard)?.stop();
      const loop = new ShardLoop(this.shared, all[shard], term);
      this.loops.set(shard, loop);
      loop.wake();
    }
    const shards = taken.map((t) => t.shard);
    this.ctx.events.emit({ type: 'leader.acquired', instanceId: this.ctx.instanceId, term: Math.max(...taken.map((t) => t.term)), shards });
  }

  /** Shards were lost: stop their loops. */
  lost(shards: readonly number[], reason: string): void {
    const gone = shards.filter((k) => this.loops.has(k));
    if (gone.length === 0) return;
    let term = 0;
    for (const k of gone) {
      const loop = this.loops.get(k)!;
      term = Math.max(term, loop.term);
      loop.stop();
      this.loops.delete(k);
    }
    if (this.loops.size === 0) {
      this.shared.bound.end();
      clearTimeout(this.livenessTimer);
      this.live = undefined;
    }
    this.ctx.events.emit({ type: 'leader.lost', instanceId: this.ctx.instanceId, term, reason, shards: gone });
  }

  /** A registry change was announced naming shards (undefined: all): their loops tick at once. */
  changed(shards?: readonly number[]): void {
    for (const [k, loop] of this.loops) if (shards === undefined || shards.includes(k)) loop.wake();
  }

  /** Fires what is due now in every shard led here (a fake clock jumped, or the connection is back). */
  wake(): void {
    this.changed();
  }

  /** Stops the loops' timers and refuses new work; {@link idle} then waits for the ticks under way. */
  halt(): void {
    this.halted = true;
    clearTimeout(this.livenessTimer);
    for (const loop of this.loops.values()) loop.stop();
  }

  /** Resolves when the ticks under way are done (their failures are already recorded). */
  async idle(): Promise<void> {
    await Promise.all([...this.loops.values()].map((l) => l.idle()));
  }

  /** The last liveness read, or a new one when none is or `fresh` asks for one. */
  private liveRead(fresh = false): Promise<LiveRead> {
    if (this.live === undefined || fresh) {
      const read = this.ctx.declarations.readLive();
      this.live = read;
      read.catch(() => {
        if (this.live === read) this.live = undefined; // the next batch reads again
      });
    }
    return this.live;
  }

  /**
   * Reads which schedules a live instance declares (after a heartbeat, and when the earliest
   * liveUntil passes), for the next batches of every loop; marks "look at it now" the orphaned
   * schedules a live instance declares again, in the shards led here (they were taken out of the
   * due index), and arms the next read for the earliest liveUntil.
   */
  refreshLiveness(): void {
    if (this.loops.size === 0 || this.halted) return;
    const read = this.ctx.declarations.readLive();
    this.live = read;
    void read
      .then(async (r) => {
        if (this.loops.size === 0 || this.halted) return; // no longer leading, or stopping (its connection may be closing): no new leader work
        const { client, keys, namespace } = this.ctx;
        const orphaned = await this.shared.bound.call(readOrphaned(client, keys), 'the orphaned read');
        const back = [...orphaned.keys()].filter((name) => r.names.has(name));
        for (const [shard, names] of byShard(namespace, back, (n) => n)) {
          const loop = this.loops.get(shard.shard);
          if (loop === undefined) continue;
          await this.shared.bound.call(markDueScript(client, shard, names), 'the due index mark');
          loop.wake();
        }
        let soonest = Infinity;
        for (const until of r.until.values()) soonest = Math.min(soonest, until);
        clearTimeout(this.livenessTimer);
        if (soonest !== Infinity && this.loops.size > 0 && !this.halted) {
          this.livenessTimer = setTimeout(() => this.refreshLiveness(), Math.max(1, soonest + 1 - this.ctx.now()));
        }
      })
      .catch((err: unknown) => {
        if (this.live === read) this.live = undefined;
        this.shared.failures.failed(err);
      });
  }
}
