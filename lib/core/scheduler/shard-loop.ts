/**
 * One shard's firing loop, while this instance leads the shard (docs/scheduler-shards.md): a tick
 * takes what its due index says is due, a batch of `SHARD_DUE.batch` (protocol.ts) at most at a time
 * (take-due.lua: the scores and the definitions), reads their lastFired, applies liveness to the
 * code-declared ones, plans each (plan.ts: every rule of a gap), fires them (fire.lua per queue,
 * chunks of 125, all in flight), settles each result (firing-settle.ts) and moves each score on by
 * compare-and-set (advance-due.lua), in the slots of the leader's gate (batch-gate.ts). Its first
 * batches are made in a pass with the other loops that tick at the same time (shard-pass.ts: one
 * round trip per step for all of them). Then it arms its timer for the next wake in the index, at
 * most {@link IDLE_RECHECK_MS} ahead (the loops armed for one ms share a timer). Ticks of one shard
 * never overlap; a notice of a change, an acquisition or a fake clock's jump ticks at once. Nothing
 * is kept between ticks but the caches. Units: epoch ms.
 */
import type { ShardKeys } from '../redis/keys.js';
import { CallDeadlineError } from '../leadership/deadline.js';
import { Slicer } from './due-entry.js';
import type { FiringShared } from './firing-settle.js';
import { ALONE, PASS_ROUNDS, type PassLoop, type PassOutcome } from './shard-pass.js';

/** The longest a shard's leader waits between two looks at its due index, ms (a lost change notice costs at most this). */
export const IDLE_RECHECK_MS = 10_000;

/** One shard's loop; see the module doc. */
export class ShardLoop implements PassLoop {
  /** When this leadership of the shard began (Redis time, epoch ms): triggers due before it came due while nobody led. */
  readonly leaderSince: number;
  private work: Promise<void> = Promise.resolve();
  private queued = false;
  private stopped = false;

  constructor(
    private readonly shared: FiringShared,
    readonly keys: ShardKeys,
    /** The fencing term of this leadership of the shard. */
    readonly term: number,
  ) {
    this.leaderSince = shared.ctx.now();
  }

  /** Ticks as soon as the tick under way (if any) is done; further requests meanwhile are one. */
  wake(): void {
    if (this.stopped || this.queued) return;
    this.queued = true;
    this.work = this.work
      .then(() => {
        this.queued = false;
        return this.tick();
      })
      .catch((err: unknown) => this.failed(err));
  }

  /** Stops the loop (the shard was lost or the scheduler stops); {@link idle} waits for its tick. */
  stop(): void {
    this.stopped = true;
    this.shared.passes.disarm(this);
  }

  /** Resolves when the tick under way is done. */
  async idle(): Promise<void> {
    await this.work.catch(() => {});
  }

  /** Whether the loop runs and this instance leads its shard (checked before each call). */
  leading(): boolean {
    return !this.stopped && this.shared.ctx.running() && this.shared.leads(this.keys.shard);
  }

  private failed(err: unknown): void {
    if (err instanceof CallDeadlineError && !this.leading()) return;
    this.shared.failures.failed(err);
    if (this.leading()) this.arm(this.shared.ctx.now() + this.shared.failures.backoffMs, this.shared.failures.backoffMs);
  }

  /** Arms the timer for `atMs` (the time source's epoch ms), `inMs` from now. */
  private arm(atMs: number, inMs: number): void {
    if (!this.leading()) return this.shared.passes.disarm(this);
    this.shared.passes.arm(this, atMs, inMs);
  }

  /**
   * Fires what is due, a batch at a time (the first {@link PASS_ROUNDS} in a pass with the loops that
   * tick now, the others alone), then arms the timer for the next wake. A tick waits for the gate's
   * slots even when nothing is due: the read of the due index is in them.
   */
  private async tick(): Promise<void> {
    this.shared.passes.disarm(this);
    if (!this.leading()) return;
    const { ctx, passes } = this.shared;
    const slicer = new Slicer();
    let next: number | undefined;
    let written = Infinity;
    for (let round = 0; ; round++) {
      let r: PassOutcome | typeof ALONE | undefined;
      if (round < PASS_ROUNDS) r = await passes.together(this);
      else {
        await slicer.yield(); // a full batch: more may be due; a turn of the event loop first
        if (!this.leading()) return;
        r = await passes.alone(this);
      }
      if (r === ALONE) r = await passes.alone(this); // a step shared with other shards failed: this one's batch alone
      if (r === undefined) return; // no longer leading
      next = r.next;
      written = Math.min(written, r.written);
      if (!r.full) break;
      if (!this.leading()) return;
    }
    this.shared.failures.ok();
    const wakeAtMs = Math.min(next ?? Infinity, written);
    const now = ctx.now();
    const inMs = wakeAtMs === Infinity ? IDLE_RECHECK_MS : Math.min(IDLE_RECHECK_MS, Math.max(1, Math.ceil(wakeAtMs - now)));
    this.arm(wakeAtMs === Infinity || inMs === IDLE_RECHECK_MS ? now + inMs : wakeAtMs, inMs);
    if (ctx.signals.active) ctx.signals.emit('tick.done', {});
  }
}
