import type { ClockOffset } from '../clock-offset.js';
import { FailureLog, type ChronosLogger } from '../logger.js';
import type { RedisClient } from '../redis/connection.js';
import { forwardScript } from '../redis/commands.js';
import type { ConsumedQueue } from './consumer.js';
import type { Loops } from './loops.js';

/**
 * The forward loop of a worker server: moves due delayed and retry tasks of its queues into their
 * streams (forward.lua, at most 1000 per queue per round), then sleeps until the next due one (by
 * Node timer) or `forwardIntervalMs`. Each round trip is also a sample of Redis time for the
 * server's {@link ClockOffset} (the estimate it holds trigger tasks by, filtered by round trip).
 */
export class Forwarder {
  /** Failures of the forward loop (reported by the server's `health()`). */
  readonly failures: FailureLog;
  /** When the loop wakes next (epoch ms, local clock), and how to wake it sooner. */
  private wakeUp?: { at: number; wake: () => void };

  constructor(
    private readonly client: RedisClient,
    private readonly queues: readonly ConsumedQueue[],
    private readonly forwardIntervalMs: number,
    private readonly loops: Loops,
    private readonly isRunning: () => boolean,
    logger: ChronosLogger,
    private readonly clockOffset: ClockOffset,
  ) {
    this.failures = new FailureLog(logger, 'Forwarding due tasks');
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
          this.clockOffset.sample(sent, redisNow, Date.now());
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
