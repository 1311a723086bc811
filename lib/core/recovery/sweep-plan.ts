import { engineTime } from '../runtime/time.js';
/**
 * Which queues the visibility-timeout sweep of a worker server looks at on each tick (every
 * `recoverInterval` ms). Liveness finds dead servers (their entries are reclaimed at once), so the
 * sweep is a safety net for consumers that are alive but unresponsive (stopped, hung: their score in
 * `<ns>:live` is overdue), consumers nobody knows (a server of an older version, or forgotten), and
 * pending entries whose stream entry is gone (lost). Its picks:
 * - the first tick: every queue (orphans from before this server started);
 * - while `sweepAll` (an overdue server's entries may be crossing the visibility timeout): every queue,
 *   so such entries come back about one `recoverInterval` after the timeout, as they always did;
 * - otherwise: one queue in turn, at most one per `turnGapMs` (the caller makes each queue swept about
 *   every `max(queues × recoverInterval, visibilityTimeout / 2)` ms), plus the queues asked for with
 *   {@link later} once their time has come.
 * So an idle server costs at most one recover.lua per `recoverInterval`, whatever its number of queues,
 * and fewer with few queues.
 */
export class SweepPlan<Q> {
  private next = 0;
  private first = true;
  /** When the last queue in turn was picked (epoch ms); -Infinity before. */
  private turnAt = -Infinity;
  /** Queue → when it wants a sweep (epoch ms, local clock). */
  private readonly due = new Map<Q, number>();

  /**
   * @param queues every queue of the server, in a fixed order.
   * @param turnGapMs least time between two picks of a queue in turn, ms (0: one on every tick).
   */
  constructor(
    private readonly queues: readonly Q[],
    private readonly turnGapMs = 0,
  ) {}

  /** The queues to sweep on this tick; `now` is epoch ms. */
  pick(sweepAll: boolean, now = engineTime.now()): Q[] {
    if (this.first || sweepAll) {
      this.first = false;
      this.due.clear();
      this.turnAt = now;
      return [...this.queues];
    }
    const out = new Set<Q>();
    if (this.queues.length > 0 && now - this.turnAt >= this.turnGapMs) {
      this.turnAt = now;
      out.add(this.queues[this.next]);
      this.next = (this.next + 1) % this.queues.length;
    }
    for (const [q, at] of this.due) {
      if (at > now) continue;
      out.add(q);
      this.due.delete(q);
    }
    return [...out];
  }

  /** Asks for a sweep of `queue` at `at` (epoch ms) or soon after; the earliest request wins. */
  later(queue: Q, at: number): void {
    const was = this.due.get(queue);
    if (was === undefined || at < was) this.due.set(queue, at);
  }
}
