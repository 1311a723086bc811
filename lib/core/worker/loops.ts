/**
 * The sleeps of a worker server's loops (fetch, forward, the per-queue readers). `stop()` wakes
 * every sleeper at once, so a shutdown does not wait for a timer. (The loops themselves are
 * services: see services.ts.)
 */
export class Loops {
  private readonly sleepers = new Set<() => void>();
  private stopped = false;

  /** Sleeps `ms`; {@link stop} wakes every sleeper at once. */
  sleep(ms: number): Promise<void> {
    return this.sleeper(ms).done;
  }

  /**
   * A sleep of `ms` that `wake()` (or {@link stop}) ends sooner. After {@link stop} it ends at once: a
   * loop that was in the middle of a round when the loops were stopped (nothing to wake) must not
   * sleep out its interval before it sees that it should end (a forward round in flight at a shutdown
   * slept its 30 s poll, and the drain gave up after shutdownTimeout + 5 s).
   */
  sleeper(ms: number): { done: Promise<void>; wake: () => void } {
    if (this.stopped) return { done: Promise.resolve(), wake: () => {} };
    let wake!: () => void;
    const done = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(t);
        this.sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
    return { done, wake };
  }

  /** Wakes every sleeper, and ends every later sleep at once (the loops are one server's, which does not start again). */
  stop(): void {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
  }
}
