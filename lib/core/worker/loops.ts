import { FailureLog, type ChronosLogger } from '../runtime/logger.js';

/**
 * The background activity of a worker server: its long-running loops (fetch, forward), its
 * periodic jobs (`every`) and the sleeps of its loops. `stop()` clears the periodic jobs and wakes
 * every sleeper at once, so a shutdown does not wait for a timer.
 */
export class Loops {
  private readonly started: Promise<void>[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly logger: ChronosLogger,
    /** True while the server runs; a periodic job is skipped otherwise. */
    private readonly isRunning: () => boolean,
  ) {}

  /** Keeps a long-running loop's promise, to await its end at shutdown. */
  start(loop: Promise<void>): void {
    this.started.push(loop);
  }

  /** Settles once every loop passed to {@link start} has ended. */
  ended(): Promise<unknown> {
    return Promise.allSettled(this.started);
  }

  /**
   * Runs `fn` every `ms` ms while the server runs, never two at once (a tick is skipped while the
   * last one is busy). A failure is logged once per run of failures under `what`.
   */
  every(ms: number, fn: () => Promise<void>, what: string): void {
    const failures = new FailureLog(this.logger, what);
    let busy = false;
    const t = setInterval(() => {
      if (busy || !this.isRunning()) return;
      busy = true;
      fn()
        .then(
          () => failures.ok(),
          (err) => failures.failed(err),
        )
        .finally(() => (busy = false));
    }, ms);
    this.timers.push(t);
  }

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

  /** Clears the periodic jobs and wakes every sleeper. */
  stop(): void {
    for (const t of this.timers) clearInterval(t);
    for (const wake of this.sleepers) wake();
  }
}
