import { performance } from 'node:perf_hooks';

/**
 * `performance.timeOrigin`, read at the first {@link monotonicNow} (it is fixed for the life of the
 * process): Node's getter checks its receiver and asks its binding at every read, and the worker
 * reads the clock once or more per task.
 */
let timeOrigin: number | undefined;

/**
 * The local base every engine instant is carried by: the monotonic clock, as epoch ms
 * (`performance.timeOrigin + performance.now()`). It reads the wall clock once, when the process
 * starts, and only moves forward at the rate of the monotonic clock after that: a step of the wall
 * clock (NTP, a VM resumed from suspend, `Date.now` patched) does not move it.
 */
export function monotonicNow(): number {
  return (timeOrigin ??= performance.timeOrigin) + performance.now();
}

/**
 * Test hook: forgets the `performance.timeOrigin` {@link monotonicNow} read, so its next read takes it
 * again (a test that stands in for a process started with its wall clock ahead redefines it, then calls this).
 */
export function rereadTimeOrigin(): void {
  timeOrigin = undefined;
}

/**
 * The one time source of the engine: Redis server time, estimated from round trips whose reply
 * carries Redis's `TIME`, and carried forward between them by the monotonic clock
 * ({@link monotonicNow}). Every "now" of `lib/core` comes from it (the wall clock only where a
 * human-readable date is printed), so a step of the local wall clock changes nothing: no trigger
 * task is held past its instant or started before it, no firing stalls, no false catch-up. Before
 * the first round trip it is the monotonic base itself. A process keeps one ({@link engineTime}):
 * the worker feeds it with its forward round trips, the scheduler with its lease and fire round
 * trips, the Inspector with its `TIME` calls.
 *
 * The estimate: a round trip sent at `sentAt` and received at `receivedAt` (monotonic base) whose
 * reply says Redis time was `redisNow` bounds the offset (Redis time − monotonic base): Redis
 * answered after the request left and before the reply came back, so
 * `redisNow − receivedAt ≤ offset ≤ redisNow − sentAt`. The estimate is the *lower* bound of the
 * sample with the shortest round trip among the recent ones (the last {@link WINDOW_SAMPLES}, none
 * older than {@link WINDOW_MS}): the shortest round trip bounds the offset most tightly, and the lower
 * bound means the estimate of Redis time is never ahead of it, so nothing held by it starts early.
 * A reply that sat in a queue during an outage (a hung or restarting Redis, a paused process) has a
 * huge round trip: it does not move the estimate while a recent sample with a short one exists.
 * When a sample proves the estimate is ahead (its upper bound is below the estimate: Redis's own
 * clock was stepped back, or the old samples are stale), the window restarts from that sample.
 */
export class RedisTime {
  #samples: Sample[] = [];
  #offsetMs = 0;

  /** @param local the local base, epoch ms (the monotonic clock; unit tests pass fixed instants). */
  constructor(private readonly local: () => number = monotonicNow) {}

  /** Redis time now (estimated), whole epoch ms (rounded down: never ahead); the monotonic base before the first round trip. */
  now(): number {
    return Math.floor(this.local() + this.#offsetMs);
  }

  /**
   * Redis time now (estimated) with its fraction of a millisecond, epoch ms: never ahead of Redis
   * time like {@link now}, without its rounding down (what an instant's timer is held by: runtime/instant.ts).
   */
  exactNow(): number {
    return this.local() + this.#offsetMs;
  }

  /** The local base now, epoch ms: what a round trip's send and receipt are read on ({@link sample}). */
  localNow(): number {
    return this.local();
  }

  /** The current estimate of (Redis time − local base), ms; 0 before the first sample. */
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
   * Takes one round trip: sent at `sentAtMs`, received at `receivedAtMs` (both read with
   * {@link localNow}, epoch ms), whose reply said Redis time was `redisNowMs` (epoch ms: whole ms rounded
   * down, or with its fraction when the reply has Redis's microseconds).
   */
  sample(sentAtMs: number, redisNowMs: number, receivedAtMs: number): void {
    const rttMs = Math.max(0, receivedAtMs - sentAtMs);
    // most replies carry whole ms (rounded down): Redis time was up to 1 ms past redisNowMs, so the upper bound allows it
    // (else a sample in whole ms with a short round trip would seem to prove ahead an estimate from a sub-ms one)
    const s: Sample = { lowMs: redisNowMs - receivedAtMs, highMs: redisNowMs + 1 - sentAtMs, rttMs, at: receivedAtMs };
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
  /** When it was received (local base, epoch ms). */
  at: number;
}

/** Samples kept at most (at one a second, about the last half minute). */
const WINDOW_SAMPLES = 32;
/** Samples older than this no longer count, ms (clocks drift; a newer sample then wins whatever its round trip). */
const WINDOW_MS = 30_000;

/** The process's one time source: every part of the engine reads "now" from it and feeds it its round trips. */
export const engineTime = new RedisTime();
