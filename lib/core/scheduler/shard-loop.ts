/**
 * One shard's firing loop, while this instance leads the shard (docs/scheduler-shards.md): a tick
 * takes what its due index says is due, a batch of {@link SHARD_DUE}.batch at a time (take-due.lua:
 * the scores and the definitions), reads their lastFired, applies liveness to the code-declared ones,
 * plans each (plan.ts: every rule of a gap), fires them (fire.lua per queue, chunks of 250, all in
 * flight), settles each result (firing-settle.ts) and moves each score on by compare-and-set
 * (advance-due.lua), in a slot of the leader's gate (batch-gate.ts: at most two shards' batches at
 * once). Then it arms its timer for the next wake in the index, at most
 * {@link IDLE_RECHECK_MS} ahead. Ticks of one shard never overlap; a notice of a change, an
 * acquisition or a fake clock's jump ticks at once. Nothing is kept between ticks but the caches.
 * Units: epoch ms.
 */
import { takeDueScript, advanceDueScript, type DueItem, type DueMove } from '../redis/commands/shard-due.js';
import type { ShardKeys } from '../redis/keys.js';
import { SHARD_DUE } from '../redis/protocol.js';
import { CallDeadlineError } from '../leadership/deadline.js';
import { entryOf, exhaustedLine, readLastFired, Slicer, type Entry } from './due-entry.js';
import type { FireItem } from './fire-triggers.js';
import { applyLiveness, forgetOrphaned, orphanedOf, storeOrphaned } from './orphans.js';
import { corked } from '../redis/cluster.js';
import { isPlanned, plan, wakeAt } from './plan.js';
import type { FiringShared } from './firing-settle.js';

/** The longest a shard's leader waits between two looks at its due index, ms (a lost change notice costs at most this). */
export const IDLE_RECHECK_MS = 10_000;
/** How soon a schedule that could not be decided now is looked at again, ms (a liveness bound, a fence, an orphaned refusal). */
const RECHECK_MS = 1_000;
/** No stored orphaned-since instants (a batch of runtime schedules only). */
const NONE_ORPHANED: ReadonlyMap<string, number> = new Map();

/** One shard's loop; see the module doc. */
export class ShardLoop {
  /** When this leadership of the shard began (Redis time, epoch ms): triggers due before it came due while nobody led. */
  private leaderSince: number;
  private timer?: NodeJS.Timeout;
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
    clearTimeout(this.timer);
  }

  /** Resolves when the tick under way is done. */
  async idle(): Promise<void> {
    await this.work.catch(() => {});
  }

  private leading(): boolean {
    return !this.stopped && this.shared.ctx.running() && this.shared.leads(this.keys.shard);
  }

  private failed(err: unknown): void {
    if (err instanceof CallDeadlineError && !this.leading()) return;
    this.shared.failures.failed(err);
    if (this.leading()) this.arm(this.shared.failures.backoffMs);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    if (!this.leading()) return;
    this.timer = setTimeout(() => {
      const { signals } = this.shared.ctx;
      if (signals.active) signals.emit('tick.start', {});
      this.wake();
    }, ms);
  }

  /**
   * Fires what is due, a batch at a time, each in a slot of the leader's gate (batch-gate.ts: the
   * shards' batches take turns), then arms the timer for the next wake. The read of the due index
   * is in the slot too: 16 replies of a full batch decoded together block the loop as well (about
   * 100 ms measured when a leader takes 16 shards behind a burst). So a tick waits its turn even
   * when nothing is due: a round trip per batch ahead of it.
   */
  private async tick(): Promise<void> {
    clearTimeout(this.timer);
    if (!this.leading()) return;
    const { ctx, gate } = this.shared;
    const slicer = new Slicer();
    let next: number | undefined;
    let written = Infinity;
    for (;;) {
      const release = await gate.acquire();
      let full: boolean;
      try {
        if (!this.leading()) return;
        const now = ctx.now(); // after the wait for the slot
        const batch = await this.shared.bound.call(takeDueScript(ctx.client, this.keys, now, SHARD_DUE.batch), 'the due index read');
        next = batch.next;
        if (batch.items.length > 0) written = Math.min(written, await this.batch(batch.items, now));
        full = batch.items.length >= SHARD_DUE.batch;
      } finally {
        release();
      }
      if (!full) break;
      await slicer.yield(); // a full batch: more may be due; a turn of the event loop first
      if (!this.leading()) return;
    }
    this.shared.failures.ok();
    const wakeAtMs = Math.min(next ?? Infinity, written);
    this.arm(wakeAtMs === Infinity ? IDLE_RECHECK_MS : Math.min(IDLE_RECHECK_MS, Math.max(1, Math.ceil(wakeAtMs - ctx.now()))));
    if (ctx.signals.active) ctx.signals.emit('tick.done', {});
  }

  /**
   * One batch: decode, lastFired, liveness, plan, fire, settle, advance. @returns the earliest wake
   * instant the batch wrote (a new score or a retry; Infinity: none): take-due.lua's next wake was
   * read before these were written.
   */
  private async batch(items: DueItem[], now: number): Promise<number> {
    const { ctx, cache, bound } = this.shared;
    const entries: Entry[] = [];
    const moves: DueMove[] = [];
    const decoding = new Slicer(); // a cold cache decodes and compiles every definition of the batch
    for (const item of items) {
      if (decoding.due) await decoding.yield();
      try {
        if (item.json === undefined) throw new Error('no definition in the registry');
        entries.push(entryOf(item as DueItem & { json: Buffer }, cache, now));
      } catch (err) {
        ctx.logger.error(
          `Schedule definition in Redis is invalid; it does not fire (schedule=${item.name} error=${(err as Error).message})`,
        );
        moves.push({ name: item.name, read: item.score, next: undefined });
      }
    }
    // the code-declared ones' stored orphaned-since instants are read with the lastFired: one write, both in flight
    // (only this shard's leader writes them, in its batches, which never overlap)
    const code = entries.filter((e) => !e.stored.runtime);
    const [, orphaned] = await corked(ctx.client, () =>
      Promise.all([
        bound.call(readLastFired(ctx.client, entries), 'the lastFired read'),
        code.length === 0
          ? NONE_ORPHANED
          : bound.call(
              orphanedOf(
                ctx.client,
                ctx.keys,
                code.map((e) => e.stored.name),
              ),
              'the orphaned read',
            ),
      ]),
    );
    for (const e of entries) if (e.exhausted) ctx.logger.log(exhaustedLine(e.stored));
    await this.liveness(code, orphaned, now);
    const fire: FireItem[] = [];
    const slicer = new Slicer();
    for (const e of entries) {
      if (isPlanned(e, now)) {
        const { stored, spec, lastFired, leadMs, liveUntil, orphanSpan: orphaned } = e;
        this.shared.apply(e, plan({ stored, spec, lastFired, now, leadMs, leaderSince: this.leaderSince, liveUntil, orphaned }), fire);
      }
      if (slicer.due) await slicer.yield();
    }
    if (fire.length > 0) await this.shared.fire(fire, this.keys.shard, () => this.leading());
    // the orphaned spans are skipped in Redis (lastFired moved past them): their stored instants go
    const spans = entries.filter((e) => e.orphanSpan !== undefined && e.lastFired >= e.orphanSpan.until);
    if (spans.length > 0)
      await bound.call(
        forgetOrphaned(
          ctx.client,
          ctx.keys,
          spans.map((e) => e.stored.name),
        ),
        'the orphaned forget',
      );
    let earliest = Infinity;
    for (const e of entries) {
      const n = this.nextScore(e, now);
      if (n !== undefined) earliest = Math.min(earliest, n);
      moves.push({ name: e.stored.name, read: e.score, next: n });
    }
    await bound.call(advanceDueScript(ctx.client, this.keys, moves), 'the due index advance');
    return earliest;
  }

  /**
   * Liveness of the batch's code-declared schedules (runtime ones are always live): liveUntil,
   * orphaned-since (stored once), the orphaned span of one declared again (orphans.ts).
   * @param code the batch's code-declared entries; `stored` their stored orphaned-since instants ({@link orphanedOf})
   */
  private async liveness(code: Entry[], stored: ReadonlyMap<string, number>, now: number): Promise<void> {
    if (code.length === 0) return;
    const { ctx, bound } = this.shared;
    let read = await this.shared.liveRead();
    // only a fresh read may find a schedule undeclared: the last one may predate its declaration (a new instance)
    if (code.some((e) => !read.names.has(e.stored.name))) read = await bound.call(this.shared.liveRead(true), 'the liveness read');
    const toStore = applyLiveness(code, read, stored, now, (name) => ctx.declarations.liveUntilOf(name, read));
    await bound.call(storeOrphaned(ctx.client, ctx.keys, toStore), 'the orphaned-since write');
    for (const e of code) ctx.declarations.setLive(e, e.live);
  }

  /**
   * The entry's next score in the due index: its next wake; out of the index (undefined) when it
   * has nothing to plan (no next trigger, maxRuns reached, orphaned, paused); or a look again soon
   * when it could not be decided now (its next trigger is past its liveUntil, a retry instant).
   */
  private nextScore(e: Entry, now: number): number | undefined {
    if (e.exhausted || !e.live || e.stored.paused || e.next === null) return undefined;
    if (e.retryAt !== undefined) return Math.max(e.retryAt, now + 1);
    if (e.next > e.liveUntil) {
      e.retryAt = now + RECHECK_MS; // the next liveness read decides
      return e.retryAt;
    }
    return wakeAt(e);
  }
}
