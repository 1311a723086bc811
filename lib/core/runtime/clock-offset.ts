/**
 * The one estimator of Redis server time a process keeps: (Redis time − local clock), ms, learnt
 * from round trips whose reply carries Redis's `TIME`. The scheduler feeds it with its lease and
 * fire round trips, the worker with its forward round trips; the worker holds early trigger tasks
 * by it, the scheduler plans by it. Instants are epoch ms on the local clock the caller uses.
 *
 * A round trip sent at `sentAt` and received at `receivedAt` whose reply says Redis time was
 * `redisNow` bounds the offset: Redis answered after the request left and before the reply came
 * back, so `redisNow − receivedAt ≤ offset ≤ redisNow − sentAt`. The estimate is the *lower*
 * bound of the sample with the shortest round trip among the recent ones (the last
 * {@link WINDOW_SAMPLES}, none older than {@link WINDOW_MS}): the shortest round trip bounds the
 * offset most tightly, and the lower bound means the estimate of Redis time is never ahead of it,
 * so nothing held by it starts early. A reply that sat in a queue during an outage (a hung or
 * restarting Redis, a paused process) has a huge round trip: it does not move the estimate while a
 * recent sample with a short one exists.
 *
 * When a sample proves the estimate is ahead (its upper bound is below the estimate: the local
 * clock was stepped, or the old samples are stale), the window restarts from that sample.
 */
export class ClockOffset {
  #samples: Sample[] = [];
  #offsetMs = 0;

  /** The current estimate of (Redis time − local clock), ms; 0 before the first sample. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** The round trip of the sample the estimate comes from, ms; Infinity before the first sample. */
  get bestRttMs(): number {
    let best = Infinity;
    for (const s of this.#samples) best = Math.min(best, s.rttMs);
    return best;
  }

  /**
   * Takes one round trip: sent at `sentAtMs`, received at `receivedAtMs` (both on the local clock,
   * epoch ms), whose reply said Redis time was `redisNowMs` (epoch ms).
   */
  sample(sentAtMs: number, redisNowMs: number, receivedAtMs: number): void {
    const rttMs = Math.max(0, receivedAtMs - sentAtMs);
    const s: Sample = { lowMs: redisNowMs - receivedAtMs, highMs: redisNowMs - sentAtMs, rttMs, at: receivedAtMs };
    if (this.#samples.length > 0 && this.#offsetMs > s.highMs) this.#samples = []; // the estimate ran ahead: start again
    this.#samples = this.#samples.filter((old) => old.at > receivedAtMs - WINDOW_MS && old.at <= receivedAtMs);
    this.#samples.push(s);
    if (this.#samples.length > WINDOW_SAMPLES) this.#samples.shift();
    let best = this.#samples[0];
    for (const c of this.#samples) if (c.rttMs <= best.rttMs) best = c;
    this.#offsetMs = best.lowMs;
  }
}

interface Sample {
  /** Lower and upper bounds of the offset, ms. */
  lowMs: number;
  highMs: number;
  rttMs: number;
  /** When it was received (local clock, epoch ms). */
  at: number;
}

/** Samples kept at most (at one a second, about the last half minute). */
const WINDOW_SAMPLES = 32;
/** Samples older than this no longer count, ms (clocks drift; a newer sample then wins whatever its round trip). */
const WINDOW_MS = 30_000;
