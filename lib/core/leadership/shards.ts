import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { FailureLog, type ChronosLogger } from '../runtime/logger.js';
import { CallDeadlineError, within } from './deadline.js';
import { explainFailure } from '../redis/failures.js';
import { releaseShardsScript, shardsScript, type ShardsOutcome } from '../redis/commands/shards.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';

/** What the shard leases tell their owner. */
export interface ShardLeaseListener {
  /** Shards this instance took in one call (each with its new fencing term). */
  acquired(taken: ReadonlyArray<{ shard: number; term: number }>): void;
  /** Shards this instance no longer leads: released for a fair share, found taken, expired by the local clock, or stopped (`resigned`). */
  lost(shards: readonly number[], reason: string): void;
  /** A round trip for the time source: sent and received on its local (monotonic) base, epoch ms, answered with Redis time (epoch ms). */
  clockSample(sentAtMs: number, redisNowMs: number, receivedAtMs: number): void;
}

/** What {@link ShardLeases} works with. */
export interface ShardLeasesOptions {
  client: RedisClient;
  keys: SchedulerKeys;
  instanceId: string;
  /** The lease of each shard and of the membership, ms; renewed every ttlMs / 2. */
  ttlMs: number;
  /** How many shards (protocol.ts SHARD_COUNT). */
  shardCount: number;
  logger: ChronosLogger;
  listener: ShardLeaseListener;
  /** The time source's local (monotonic) now, epoch ms. */
  localNow(): number;
}

/** After a notice or at another's expiry, how long past the instant to call, ms (Redis and this clock differ by a little). */
const EXPIRY_SLACK_MS = 5;

/**
 * The shortest wait between two failed calls, as a fraction of the TTL (100 ms at 5 s): the retries
 * while the leases still hold wait half the time left, which near the deadline went down to 0 ms (13
 * calls in the last 0.5 s of a lease with Redis refusing writes, trial 45).
 */
const RETRY_FLOOR_DIVISOR = 50;

/**
 * The shard leases of one instance (docs/scheduler-shards.md): one shards.lua call every TTL/2
 * renews its membership and every shard it leads, releases those above its fair share and takes
 * free or expired ones up to it; another call comes at once on a resign notice (a shard was freed,
 * an instance joined) and at the earliest expiry of another's lease (a SIGKILLed instance's shards
 * are taken within the TTL). The instance leads its shards until `sent + ttl − margin` of its last
 * successful call, measured on the monotonic clock from when the call was sent; a timer steps down
 * at that deadline whatever calls are in flight (a paused process, a silent socket), so it stops
 * firing before any lease can expire in Redis and be taken. A reply that came after that deadline
 * is not trusted: its shards are announced only by the next call, made at once. `stop()` releases
 * every shard at once (release-shards.lua), so the others take them without waiting.
 *
 * A call given up at its deadline is not cancelled: the client may still send it, after a failover
 * even after the newer calls (cluster-failover.spec: an older join ran after a newer standAside and
 * made the instance a member again). Each call carries this loop's incarnation and a rising seq, and
 * shards.lua ignores one older than a call of the same incarnation that already ran.
 *
 * Too slow to lead: a call whose round trip is longer than half the lease's local validity
 * (`(ttl − margin) / 2`) comes back with less of the lease left than a call takes, so a fire sent then
 * cannot come back before the lease ends (LeaseBound abandons it), and the next renewal cannot land in
 * time either: the instance flaps between leading and not, fires nothing, while each renewal that
 * reaches Redis keeps its shards from the others (trial: a 1.4 s round trip with a 2 s TTL fired none
 * of its 8 shards' triggers in 15 s; past the TTL they were taken only between its calls, up to 10 s
 * late). Such a reply is not trusted (its shards are stepped down from) and the instance **stands
 * aside**: its next calls (shards.lua `standAside`) release every shard it holds and leave the
 * members while another live member campaigns, so the others take them; alone, it leads as it can.
 * A call that missed its deadline counts as slow too. It campaigns again once a call's round trip is
 * at most half that bound. Nothing else changes: a hand-over as at a release for a fair share (new
 * terms, the dedup key keeps each trigger once).
 */
export class ShardLeases {
  private readonly heldTerms = new Map<number, number>();
  private validUntil = 0;
  /** When the held leases expire in Redis (epoch ms, Redis time): the last renewing call's redisNowMs + ttl; 0 while none is held. */
  private redisUntil = 0;
  private running = false;
  private joined = false;
  private calling = false;
  private again = false;
  private callTimer?: NodeJS.Timeout;
  private expiryTimer?: NodeJS.Timeout;
  private readonly marginMs: number;
  /** A round trip longer than this (ms) leaves less of the lease than a call takes: the instance stands aside (see the class doc). */
  private readonly slowMs: number;
  /** Names this lease loop in its calls' fence (shards.lua ignores a call older than one of the same incarnation that ran). */
  private readonly incarnation = randomBytes(8).toString('hex');
  /** The seq of the last call sent (rises with each). */
  private seq = 0;
  /** True while this instance stands aside (its calls pass shards.lua `standAside`). */
  private standingAside = false;
  /**
   * The calls' failures, logged once per run of failures (the first, then the recovery with the count)
   * as every loop's are; before, every failed call logged a warning: three per second and instance
   * while Redis refused writes (maxmemory reached), trial 45.
   */
  readonly failures: FailureLog;

  constructor(private readonly o: ShardLeasesOptions) {
    this.marginMs = Math.min(250, Math.floor(o.ttlMs / 10));
    this.slowMs = (o.ttlMs - this.marginMs) / 2;
    this.failures = new FailureLog(o.logger, 'Renewing or taking shard leases', (err) => explainFailure(o.client, err));
  }

  /** The shards this instance leads now (by its own monotonic clock), with their terms. */
  get held(): ReadonlyMap<number, number> {
    return performance.now() < this.validUntil ? this.heldTerms : new Map();
  }

  /** True while this instance leads at least one shard. */
  get isLeader(): boolean {
    return this.held.size > 0;
  }

  /** Starts campaigning (the first call announces this instance, so the others rebalance at once). */
  start(): void {
    this.running = true;
    void this.call();
  }

  /** A notice on the resign channel (a shard was released, an instance joined): call at once. */
  onResignation(): void {
    if (this.running) void this.call();
  }

  /**
   * When this instance's lease on `shard` expires in Redis (epoch ms, Redis time), as its last
   * renewal that came back set it; 0 when it does not hold `shard`. A fire call carries it
   * (fire.lua leaseUntil): Redis refuses the call from then on, when another instance may hold the shard.
   */
  leaseEnd(shard: number): number {
    return this.heldTerms.has(shard) ? this.redisUntil : 0;
  }

  /**
   * Whether this instance leads `shard` now; steps down from every shard (logging why) when the
   * local validity of its leases has run out.
   */
  check(shard: number): boolean {
    if (!this.heldTerms.has(shard)) return false;
    if (performance.now() < this.validUntil) return true;
    this.expired();
    return false;
  }

  /**
   * The local validity ran out without a successful call: steps down from every shard. `armedFor`
   * is the validity the step-down timer was armed for: when it fires and no reply has extended that
   * validity since, the leases are spent, even if `performance.now()` still reads a fraction of a ms
   * short (Node fires a timer on the event loop's cached time, which lags the monotonic clock by up
   * to ~1 ms; re-checking the clock there once left a silent leader leading until some other check).
   */
  private expired(armedFor?: number): void {
    if (this.heldTerms.size === 0) return;
    if (armedFor === this.validUntil || performance.now() >= this.validUntil) {
      this.stepDown('lease expired by the local clock: no successful renewal within leaderTtl (paused process or lost connection)');
    }
  }

  /** Stops campaigning and releases every shard and the membership (bounded by the TTL); the shards are reported lost as `resigned`. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.callTimer);
    clearTimeout(this.expiryTimer);
    const had = [...this.heldTerms.keys()];
    const term = Math.max(0, ...this.heldTerms.values());
    this.heldTerms.clear();
    this.validUntil = 0;
    this.redisUntil = 0;
    try {
      const n = await within(releaseShardsScript(this.o.client, this.o.keys, this.o.instanceId), this.o.ttlMs, 'shard release');
      if (n > 0) this.o.logger.log(`Leadership resigned (term=${term} shards=${had.join(',')})`);
    } catch (err) {
      this.o.logger.warn(
        `Could not release the shard leases; they expire by themselves within ${this.o.ttlMs} ms (error=${(err as Error).message})`,
      );
    }
    if (had.length > 0) this.o.listener.lost(had, 'resigned');
  }

  /** One shards.lua call at a time; a request while one is in flight makes one more right after it. */
  private async call(): Promise<void> {
    if (!this.running) return;
    if (this.calling) {
      this.again = true;
      return;
    }
    this.calling = true;
    clearTimeout(this.callTimer);
    let nextIn = Math.floor(this.o.ttlMs / 2);
    try {
      const sent = performance.now();
      const local = this.o.localNow();
      const aside = this.standingAside;
      // past ttl − margin the leases it renews are spent by this clock: a reply after that is not trusted
      const r = await within(
        shardsScript(this.o.client, this.o.keys, this.o.instanceId, this.o.ttlMs, this.o.shardCount, !this.joined, aside, {
          incarnation: this.incarnation,
          seq: ++this.seq,
        }),
        this.o.ttlMs - this.marginMs,
        'shard lease call',
      );
      this.joined = true;
      this.failures.ok();
      this.o.listener.clockSample(local, r.redisNow, this.o.localNow());
      if (!this.running) return;
      nextIn = this.applied(r, sent, nextIn, aside);
    } catch (err) {
      this.failures.failed(err);
      // it may still land and renew the leases in Redis: the next calls stand aside until a round trip is short again
      if (err instanceof CallDeadlineError) this.standAside(err.message);
      // the leases still hold: try again soon rather than let them run out unrenewed
      const left = this.validUntil - performance.now();
      const floor = Math.floor(this.o.ttlMs / RETRY_FLOOR_DIVISOR);
      nextIn = left > 0 ? Math.max(floor, Math.min(Math.floor(this.o.ttlMs / 10), Math.floor(left / 2))) : Math.floor(this.o.ttlMs / 4);
      this.expired();
    } finally {
      this.calling = false;
    }
    if (!this.running) return;
    if (this.again) {
      this.again = false;
      nextIn = 0;
    }
    this.callTimer = setTimeout(() => void this.call(), nextIn);
  }

  /** Applies a reply sent at `sent` (monotonic ms), of a call that stood aside when `aside`. @returns when to call next, ms. */
  private applied(r: ShardsOutcome, sent: number, regular: number, aside: boolean): number {
    const validUntil = sent + this.o.ttlMs - this.marginMs;
    const rtt = performance.now() - sent;
    if (!aside && rtt > this.slowMs) {
      // what it renewed or took is released by the next call, made at once (standing aside)
      this.standAside(`a shard lease call took ${Math.round(rtt)} ms`);
      this.stepDown('the shard lease call came back with less of the lease left than a call takes: no room to fire');
      return 0;
    }
    let rejoin = false;
    if (aside && rtt <= this.slowMs / 2) {
      this.standingAside = false;
      this.o.logger.log(`Campaigning for shard leases again: a call to Redis took ${Math.round(rtt)} ms`);
      rejoin = r.mine.size === 0; // it stood aside: join at once (the others release its share)
    }
    if (performance.now() >= validUntil) {
      // came back spent: what it renewed or took is confirmed by the next call, made at once
      this.stepDown('the shard lease call came back after the leases it renewed were spent by the local clock');
      return 0;
    }
    const lost = [...this.heldTerms.keys()].filter((k) => r.mine.get(k) !== this.heldTerms.get(k));
    if (lost.length > 0) {
      const released = lost.filter((k) => r.released.includes(k));
      const gone = lost.filter((k) => !r.released.includes(k));
      const term = Math.max(0, ...released.map((k) => this.heldTerms.get(k)!));
      for (const k of lost) this.heldTerms.delete(k);
      // every shard given up is logged, as every one taken: else the logs show two leaders of it
      if (released.length > 0) {
        const reason = aside
          ? 'released: standing aside, its round trips to Redis leave no room to fire within a lease'
          : 'released: above this instance’s fair share of the shards';
        this.o.logger.log(`Leadership released (term=${term} shards=${released.join(',')} reason=${reason})`);
        this.o.listener.lost(released, reason);
      }
      if (gone.length > 0) {
        const reason = 'token mismatch: the shard lease expired or another instance holds it';
        this.o.logger.warn(`Lost leadership (shards=${gone.join(',')} reason=${reason})`);
        this.o.listener.lost(gone, reason);
      }
    }
    const taken: { shard: number; term: number }[] = [];
    for (const [shard, term] of r.mine) {
      if (this.heldTerms.get(shard) !== term) taken.push({ shard, term });
      this.heldTerms.set(shard, term);
    }
    this.validUntil = validUntil;
    this.redisUntil = r.redisNow + this.o.ttlMs; // shards.lua wrote expiresAt = its now + ttl for every shard in `mine`
    clearTimeout(this.expiryTimer);
    if (this.heldTerms.size > 0) this.expiryTimer = setTimeout(() => this.expired(validUntil), Math.max(0, validUntil - performance.now()));
    if (taken.length > 0) {
      const term = Math.max(...taken.map((t) => t.term));
      this.o.logger.log(`Leadership acquired (term=${term} shards=${taken.map((t) => t.shard).join(',')} leaderTtlMs=${this.o.ttlMs})`);
      this.o.listener.acquired(taken);
    }
    if (rejoin) return 0;
    // call again at the next renewal, or right after another's lease or membership expires (its shards become free);
    // on a slower link (a round trip near slowMs) soon enough that the renewal's reply lands before this validity ends
    const sinceSent = performance.now() - sent;
    const chain = this.heldTerms.size > 0 ? validUntil - performance.now() - rtt - this.marginMs : Infinity;
    const renewIn = Math.max(0, Math.min(regular - sinceSent, chain));
    if (r.nextCheckAt === undefined) return renewIn;
    return Math.max(0, Math.min(renewIn, r.nextCheckAt - r.redisNow + EXPIRY_SLACK_MS));
  }

  /** From the next call on, this instance stands aside (see the class doc); logged when it begins. */
  private standAside(why: string): void {
    if (this.standingAside) return;
    this.standingAside = true;
    this.o.logger.warn(
      `Standing aside from the shard leases: ${why}; over half of a lease's ${this.o.ttlMs - this.marginMs} ms by this ` +
        `clock (leaderTtl − margin), a call leaves no room to fire: its shards go to another instance while one campaigns`,
    );
  }

  /** Steps down from every shard (they are reported lost); campaigns again soon. */
  private stepDown(reason: string): void {
    clearTimeout(this.expiryTimer);
    const had = [...this.heldTerms.keys()];
    this.heldTerms.clear();
    this.validUntil = 0;
    this.redisUntil = 0;
    if (had.length === 0) return;
    this.o.logger.warn(`Lost leadership (shards=${had.join(',')} reason=${reason})`);
    this.o.listener.lost(had, reason);
    if (this.running && !this.calling) {
      clearTimeout(this.callTimer);
      this.callTimer = setTimeout(() => void this.call(), 0);
    }
  }
}

/** The shard leases as Redis holds them (for the Inspector and tests): one HGETALL; expired entries included. */
export async function readShardLeases(
  client: RedisClient,
  keys: SchedulerKeys,
): Promise<{ shard: number; instance: string; term: number; expiresAt: number }[]> {
  const table = await client.hgetall(keys.shards);
  return Object.entries(table)
    .map(([field, value]) => {
      const parts = value.split('|');
      return { shard: Number(field), instance: parts.slice(0, -2).join('|'), term: Number(parts.at(-2)), expiresAt: Number(parts.at(-1)) };
    })
    .sort((a, b) => a.shard - b.shard);
}
