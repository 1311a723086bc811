import { FailureLog, type ChronosLogger } from '../logger.js';
import type { RedisClient } from '../redis/connection.js';
import { forwardScript } from '../redis/commands.js';
import type { ConsumedQueue } from './consumer.js';
import type { Loops } from './loops.js';

/**
 * The forward loop of a worker server: moves due delayed and retry tasks of its queues into their
 * streams (forward.lua, at most 1000 per queue per round), then sleeps until the next due one (by
 * Node timer) or `forwardIntervalMs`. Each reply also gives a sample of Redis time, kept as the
 * clock offset this server holds trigger tasks by.
 */
export class Forwarder {
  /** Failures of the forward loop (reported by the server's `health()`). */
  readonly failures: FailureLog;
  /** Redis time − local clock, ms (from the last forward.lua reply). */
  private offsetMs = 0;
  /** When the loop wakes next (epoch ms, local clock), and how to wake it sooner. */
  private wakeUp?: { at: number; wake: () => void };

  constructor(
    private readonly client: RedisClient,
    private readonly queues: readonly ConsumedQueue[],
    private readonly forwardIntervalMs: number,
    private readonly loops: Loops,
    private readonly isRunning: () => boolean,
    logger: ChronosLogger,
  ) {
    this.failures = new FailureLog(logger, 'Forwarding due tasks');
  }

  /** Redis time − local clock, ms: add it to `Date.now()` for an estimate of Redis time. 0 before the first reply. */
  get clockOffsetMs(): number {
    return this.offsetMs;
  }

  /** The loop; ends when the server stops running. */
  async run(): Promise<void> {
    const failures = this.failures;
    while (this.isRunning()) {
      let wait = this.forwardIntervalMs;
      try {
        for (const q of this.queues) {
          const sent = Date.now();
          const { moved, nextDueAt, redisNow } = await forwardScript(this.client, q.keys, 1000);
          this.offsetMs = redisNow - (sent + Date.now()) / 2;
          if (moved >= 1000) wait = 0;
          else if (nextDueAt !== undefined) wait = Math.min(wait, Math.max(0, nextDueAt - redisNow));
        }
        failures.ok();
      } catch (err) {
        failures.failed(err);
        wait = failures.backoffMs;
      }
      if (wait > 0) {
        const { done, wake } = this.loops.sleeper(wait);
        this.wakeUp = { at: Date.now() + wait, wake };
        await done;
        this.wakeUp = undefined;
      }
    }
  }

  /** A task was scheduled `delayMs` from now: make sure the loop is awake by then. */
  forwardBy(delayMs: number): void {
    const w = this.wakeUp;
    if (!w || w.at <= Date.now() + delayMs) return;
    w.at = Date.now() + delayMs;
    setTimeout(w.wake, delayMs).unref();
  }
}
