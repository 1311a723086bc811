import { performance } from 'node:perf_hooks';
import type { ChronosLogger } from '../runtime/logger.js';
import { within } from './deadline.js';
import { acquireLeaseScript, releaseLeaseScript, renewLeaseScript } from '../redis/commands/schedule.js';
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
 * The leader lease: `SET NX PX leaderTtl` plus a fencing term (acquire-lease.lua), renewed with a
 * compare-and-renew (renew-lease.lua) when half of it is spent, resigned with compare-and-delete +
 * PUBLISH (release-lease.lua). The holder considers itself leader only until `sent + ttl − margin`
 * of its last successful acquire/renew, measured on the monotonic clock from when the request was
 * *sent*. A timer steps down at that deadline whatever calls are in flight (a paused process, a
 * silent socket), so it stops firing before the lease can expire in Redis and anyone else can
 * acquire it; every call has a client-side deadline (deadline.ts).
 *
 * Renewal is paced by the same deadline: the next one is sent when half the lease is spent by
 * the monotonic clock, at once when a reply came late (an acquire held by a reconnect during a
 * failover), and again soon after a failed one while the lease still holds — so it never steps
 * down from a lease a renewal could still have extended. An acquire whose reply came after its
 * lease was spent is confirmed by a renewal before it is announced.
 */
export class LeaderLease {
  private holder?: string;
  private termValue = 0;
  private validUntil = 0;
  /** Whether `acquired` was told for the lease held now (an acquire that came back spent is confirmed first). */
  private announced = false;
  private renewTimer?: NodeJS.Timeout;
  private expiryTimer?: NodeJS.Timeout;
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
    return this.holder !== undefined && this.announced && performance.now() < this.validUntil;
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
    if (this.holder === undefined || !this.announced) return false;
    if (performance.now() < this.validUntil) return true;
    this.stepDown('lease expired by the local clock: no successful renewal within leaderTtl (paused process or lost connection)');
    return false;
  }

  /** Stops campaigning; resigns if leader (compare-and-delete + notice). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.campaignTimer);
    this.clearTimers();
    const holder = this.holder;
    if (holder === undefined) return;
    const announced = this.announced;
    this.holder = undefined;
    this.validUntil = 0;
    try {
      await within(releaseLeaseScript(this.client, this.keys, holder), this.ttlMs, 'lease release');
      this.logger.log(`Leadership resigned (term=${this.termValue})`);
    } catch (err) {
      this.logger.warn(`Could not resign; the lease will expire by itself within ${this.ttlMs} ms (error=${(err as Error).message})`);
    }
    if (announced) this.listener.lost(this.termValue, 'resigned');
  }

  private async tryAcquire(): Promise<void> {
    if (!this.running || this.holder !== undefined || this.acquiring) return;
    this.acquiring = true;
    clearTimeout(this.campaignTimer);
    let retryIn = Math.floor(this.ttlMs / 2);
    try {
      const sent = performance.now();
      const local = this.localNow();
      // past ttl − margin the lease it may have taken is spent: the next attempt finds it ours (acquire-lease.lua) or free
      const r = await within(
        acquireLeaseScript(this.client, this.keys, this.instanceId, this.ttlMs),
        this.ttlMs - this.marginMs,
        'lease acquire',
      );
      this.listener.clockSample(local, r.redisNow, this.localNow());
      if (!this.running) return;
      if (r.status === 'acquired') {
        this.holder = `${this.instanceId}|${r.term}`;
        this.termValue = r.term;
        this.announced = false;
        this.held(sent);
        if (performance.now() < this.validUntil) this.announce();
        else
          this.logger.warn(
            `Lease acquired but its reply came after the lease was spent by the local clock: confirming it by a renewal (term=${r.term})`,
          );
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

  private announce(): void {
    this.announced = true;
    this.logger.log(`Leadership acquired (term=${this.termValue} leaderTtlMs=${this.ttlMs})`);
    this.listener.acquired(this.termValue);
  }

  /**
   * A request sent at `sent` (monotonic ms) took or extended the lease: it holds until
   * `sent + ttl − margin`; the step-down timer is armed for that instant and the next renewal for
   * `sent + ttl/2` — at once when the reply came later than that.
   */
  private held(sent: number): void {
    this.validUntil = sent + this.ttlMs - this.marginMs;
    this.clearTimers();
    const now = performance.now();
    this.expiryTimer = setTimeout(() => this.check(), Math.max(0, this.validUntil - now));
    this.renewTimer = setTimeout(() => void this.renew(), Math.max(0, sent + Math.floor(this.ttlMs / 2) - now));
  }

  private async renew(): Promise<void> {
    const holder = this.holder;
    if (holder === undefined || this.renewing) return;
    const confirming = !this.announced; // an acquire whose reply came after its lease was spent
    if (!confirming && !this.check()) return;
    this.renewing = true;
    try {
      const sent = performance.now();
      const local = this.localNow();
      // no later than the lease's deadline: the step-down timer fires then, whatever this call does
      const deadlineMs = confirming ? this.ttlMs - this.marginMs : this.validUntil - sent;
      const renewal = renewLeaseScript(this.client, this.keys, holder, this.ttlMs);
      const r = await within(renewal, deadlineMs, 'lease renewal', (late) => this.lateRenewal(holder, late.status));
      this.listener.clockSample(local, r.redisNow, this.localNow());
      if (this.holder !== holder) {
        if (r.status === 'renewed') this.handBack(holder);
        return;
      }
      if (r.status === 'renewed') {
        this.held(sent);
        if (!this.announced) this.announce();
        this.listener.version(r.version);
      } else {
        this.stepDown('token mismatch: the lease expired or another instance holds it');
      }
    } catch (err) {
      if (this.holder !== holder) return;
      if (confirming) {
        this.stepDown(`the renewal confirming it failed (error=${(err as Error).message})`);
      } else if (this.check()) {
        // the lease still holds: try again soon rather than let it run out unrenewed
        const retryIn = Math.max(0, Math.min(Math.floor(this.ttlMs / 10), Math.floor((this.validUntil - performance.now()) / 2)));
        this.logger.warn(`Lease renewal failed; retrying in ${retryIn} ms (term=${this.termValue} error=${(err as Error).message})`);
        clearTimeout(this.renewTimer);
        this.renewTimer = setTimeout(() => void this.renew(), retryIn);
      }
    } finally {
      this.renewing = false;
    }
  }

  /** A renewal's reply came after its deadline: when it renewed a lease this instance gave up, hand it back. */
  private lateRenewal(holder: string, status: string): void {
    if (status === 'renewed' && this.holder !== holder) this.handBack(holder);
  }

  /** Releases a lease Redis still holds for `holder` although this instance stepped down from it, so others need not wait for it to expire. */
  private handBack(holder: string): void {
    if (!this.running) return;
    void within(releaseLeaseScript(this.client, this.keys, holder), this.ttlMs, 'lease release').then(
      (status) => {
        if (status === 'released') this.logger.log(`Released a lease renewed after this instance had stepped down (holder=${holder})`);
      },
      () => undefined, // it expires by itself within leaderTtl
    );
  }

  private clearTimers(): void {
    clearTimeout(this.renewTimer);
    clearTimeout(this.expiryTimer);
  }

  private stepDown(reason: string): void {
    if (this.holder === undefined) return;
    const announced = this.announced;
    this.holder = undefined;
    this.validUntil = 0;
    this.announced = false;
    this.clearTimers();
    if (announced) {
      this.logger.warn(`Lost leadership (term=${this.termValue} reason=${reason})`);
      this.listener.lost(this.termValue, reason);
    } else {
      this.logger.warn(`The lease acquired late could not be confirmed (term=${this.termValue} reason=${reason})`);
    }
    if (this.running) this.campaignTimer = setTimeout(() => void this.tryAcquire(), Math.floor(this.ttlMs / 2));
  }
}
