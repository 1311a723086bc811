import { performance } from 'node:perf_hooks';
import type { ChronosLogger } from '../runtime/logger.js';
import { acquireLeaseScript, releaseLeaseScript, renewLeaseScript } from '../redis/schedule-commands.js';
import type { SchedulerKeys } from '../redis/keys.js';
import type { RedisClient } from '../redis/types.js';

/** What the elector tells its owner. */
export interface LeaseListener {
  acquired(term: number): void;
  lost(term: number, reason: string): void;
  /** The registry version seen at each renewal (the leader reloads when it moves). */
  version(version: number): void;
  /** A round trip for the time source: sent and received on its local (monotonic) base, epoch ms, answered with Redis time (epoch ms). */
  clockSample(sentAtMs: number, redisNowMs: number, receivedAtMs: number): void;
}

/**
 * The leader lease: `SET NX PX leaderTtl` plus a fencing term (acquire-lease.lua), renewed every
 * TTL/2 with a compare-and-renew (renew-lease.lua), resigned with compare-and-delete + PUBLISH
 * (release-lease.lua). The holder considers itself leader only until `sentAt + ttl − margin` of
 * its last successful acquire/renew, measured on the monotonic clock from when the request was
 * *sent* — so after a long pause (SIGSTOP, GC) or a failing renewal it stops firing before the
 * lease can expire in Redis and anyone else can acquire it.
 */
export class LeaderLease {
  private holder?: string;
  private termValue = 0;
  private validUntil = 0;
  private renewTimer?: NodeJS.Timeout;
  private campaignTimer?: NodeJS.Timeout;
  private running = false;
  private renewing = false;
  private acquiring = false;
  private readonly marginMs: number;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly instanceId: string,
    private readonly ttlMs: number,
    private readonly logger: ChronosLogger,
    private readonly listener: LeaseListener,
    private readonly localNow: () => number,
  ) {
    this.marginMs = Math.min(250, Math.floor(ttlMs / 10));
  }

  /** True while this instance holds the lease by its own monotonic clock. */
  get isLeader(): boolean {
    return this.holder !== undefined && performance.now() < this.validUntil;
  }

  /** The fencing term of the current (or last) leadership of this instance. */
  get term(): number {
    return this.termValue;
  }

  /** Starts campaigning (and renewing once elected). */
  start(): void {
    this.running = true;
    void this.tryAcquire();
  }

  /** A resignation notice arrived: campaign at once instead of waiting for the TTL. */
  onResignation(): void {
    if (this.running && this.holder === undefined) void this.tryAcquire();
  }

  /**
   * Checks the lease before an action that needs it; steps down (logging why) when its local
   * validity has run out. @returns whether this instance may act as leader now.
   */
  check(): boolean {
    if (this.holder === undefined) return false;
    if (performance.now() < this.validUntil) return true;
    this.stepDown('lease expired by the local clock: no successful renewal within leaderTtl (paused process or lost connection)');
    return false;
  }

  /** Stops campaigning; resigns if leader (compare-and-delete + notice). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.campaignTimer);
    clearInterval(this.renewTimer);
    const holder = this.holder;
    if (holder === undefined) return;
    this.holder = undefined;
    this.validUntil = 0;
    try {
      await releaseLeaseScript(this.client, this.keys, holder);
      this.logger.log(`Leadership resigned (term=${this.termValue})`);
    } catch (err) {
      this.logger.warn(`Could not resign; the lease will expire by itself within ${this.ttlMs} ms (error=${(err as Error).message})`);
    }
    this.listener.lost(this.termValue, 'resigned');
  }

  private async tryAcquire(): Promise<void> {
    if (!this.running || this.holder !== undefined || this.acquiring) return;
    this.acquiring = true;
    clearTimeout(this.campaignTimer);
    let retryIn = Math.floor(this.ttlMs / 2);
    try {
      const sent = performance.now();
      const local = this.localNow();
      const r = await acquireLeaseScript(this.client, this.keys, this.instanceId, this.ttlMs);
      this.listener.clockSample(local, r.redisNow, this.localNow());
      if (!this.running) return;
      if (r.status === 'acquired') {
        this.holder = `${this.instanceId}|${r.term}`;
        this.termValue = r.term;
        this.validUntil = sent + this.ttlMs - this.marginMs;
        this.renewTimer = setInterval(() => void this.renew(), Math.floor(this.ttlMs / 2));
        this.logger.log(`Leadership acquired (term=${r.term} leaderTtlMs=${this.ttlMs})`);
        this.listener.acquired(r.term);
        return;
      }
      // someone else leads: try again right after their lease would expire
      if (r.pttlMs > 0) retryIn = Math.min(retryIn, r.pttlMs + 5);
      else retryIn = 5;
    } catch (err) {
      this.logger.warn(`Could not campaign for leadership (error=${(err as Error).message})`);
    } finally {
      this.acquiring = false;
    }
    if (this.running && this.holder === undefined) this.campaignTimer = setTimeout(() => void this.tryAcquire(), retryIn);
  }

  private async renew(): Promise<void> {
    const holder = this.holder;
    if (holder === undefined || this.renewing) return;
    if (!this.check()) return;
    this.renewing = true;
    try {
      const sent = performance.now();
      const local = this.localNow();
      const r = await renewLeaseScript(this.client, this.keys, holder, this.ttlMs);
      this.listener.clockSample(local, r.redisNow, this.localNow());
      if (this.holder !== holder) return;
      if (r.status === 'renewed') {
        this.validUntil = sent + this.ttlMs - this.marginMs;
        this.listener.version(r.version);
      } else {
        this.stepDown('token mismatch: the lease expired or another instance holds it');
      }
    } catch (err) {
      this.logger.warn(`Lease renewal failed (term=${this.termValue} error=${(err as Error).message})`);
      this.check();
    } finally {
      this.renewing = false;
    }
  }

  private stepDown(reason: string): void {
    if (this.holder === undefined) return;
    this.holder = undefined;
    this.validUntil = 0;
    clearInterval(this.renewTimer);
    this.logger.warn(`Lost leadership (term=${this.termValue} reason=${reason})`);
    this.listener.lost(this.termValue, reason);
    if (this.running) this.campaignTimer = setTimeout(() => void this.tryAcquire(), Math.floor(this.ttlMs / 2));
  }
}
