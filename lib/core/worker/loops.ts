/**
 * The sleeps of a worker server's loops (fetch, forward, the per-queue readers). `stop()` wakes
 * every sleeper at once, so a shutdown does not wait for a timer. (The loops themselves are
 * services: see services.ts.)
 */
export class Loops {
  private readonly sleepers = new Set<() => void>();

  /** Sleeps `ms`; {@link stop} wakes every sleeper at once. */
  sleep(ms: number): Promise<void> {
    return this.sleeper(ms).done;
  }

  /** A sleep of `ms` that `wake()` (or {@link stop}) ends sooner. */
  sleeper(ms: number): { done: Promise<void>; wake: () => void } {
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

  /** Wakes every sleeper. */
  stop(): void {
    for (const wake of this.sleepers) wake();
  }
}
