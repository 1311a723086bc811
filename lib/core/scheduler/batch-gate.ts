/**
 * The leader's gate on its shard batches (docs/scheduler-shards.md): at most {@link BATCH_GATE_SLOTS}
 * batches (take-due.lua → decode → plan → fire.lua → settle → advance-due.lua) run at once across
 * the shard loops of one instance. Without it, every loop of a burst (16 shards, each a batch of
 * 500 due) has its reply decoded and its plan made in the same turns of the one event loop, so the
 * blocks add up (0.3–0.5 s measured at 200,000 due at one instant, 0.8 s at 1,000,000); with it, the work between
 * two turns is at most two batches' sections. Slots go to the loops in the order they asked (a
 * loop with a full batch asks again behind the others: the shards take turns).
 */

/** Most shard batches a leader runs at once (two keep Redis busy while Node plans the other). */
export const BATCH_GATE_SLOTS = 2;

/** A counting gate, first come first served; see the module doc. */
export class BatchGate {
  private free: number;
  /** Who waits, in the order they asked, with how many slots each takes. */
  private readonly waiting: { n: number; resolve: () => void }[] = [];

  /** @throws RangeError when `slots` is not a positive integer */
  constructor(readonly slots = BATCH_GATE_SLOTS) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`BatchGate slots must be a positive integer (got ${slots})`);
    this.free = slots;
  }

  /** Batches waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with the release of `n` slots (1 to {@link slots}: a pass of several shards' batches
   * takes them all, shard-pass.ts) once they are this caller's: all at once, never some while it
   * waits for the others (two callers each holding a part would wait for each other for ever), and
   * no later caller goes ahead of it. Call the release once, when the batch is done (a second call
   * does nothing).
   * @throws RangeError when `n` is not an integer from 1 to {@link slots}
   */
  async acquire(n = 1): Promise<() => void> {
    if (!Number.isInteger(n) || n < 1 || n > this.slots) throw new RangeError(`BatchGate: ${n} slot(s) asked of ${this.slots}`);
    if (this.waiting.length === 0 && this.free >= n) this.free -= n;
    else await new Promise<void>((resolve) => this.waiting.push({ n, resolve }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free += n;
      // the slots pass on in order: the first waiter takes its share once enough are free
      while (this.waiting.length > 0 && this.free >= this.waiting[0].n) {
        const next = this.waiting.shift()!;
        this.free -= next.n;
        next.resolve();
      }
    };
  }
}
