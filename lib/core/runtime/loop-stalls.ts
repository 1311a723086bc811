import { engineTime } from './time.js';

/** How often the watch ticks, ms: a stall is noticed at the first tick after it ends. */
const TICK_MS = 100;
/** Stalls remembered (a read is never older than a few of them). */
const KEPT = 8;

/**
 * Notices when this process's event loop stood still: a SIGSTOP, a VM suspended, a handler that
 * blocked the loop. A reply that was read from the socket after such a stall may carry stream
 * entries that idled in the pending entries list for the whole stall, so another worker may have
 * reclaimed them meanwhile: the fetcher then checks that it still owns them before running them.
 *
 * A timer ticks every {@link TICK_MS} ms (unref'd: it keeps no process alive, sends nothing to
 * Redis). After a stall the timers phase of the event loop runs before socket reads are handled,
 * so the tick that sees the gap is recorded before any reply delayed by the stall is delivered.
 * Users count in (`acquire`) and out (`release`); the timer runs while one is counted in.
 */
export class LoopStalls {
  #users = 0;
  #timer?: NodeJS.Timeout;
  #lastTick = 0;
  /** The last stalls (at most {@link KEPT}): when each ended (engine time, epoch ms) and how long it lasted, ms. */
  #stalls: { endedAt: number; ms: number }[] = [];

  constructor(private readonly thresholdMs: number) {}

  /** Starts the watch (counted: the first user starts the timer). */
  acquire(): void {
    if (this.#users++ > 0) return;
    this.#lastTick = performance.now();
    this.#timer = setInterval(() => this.tick(), TICK_MS);
    this.#timer.unref();
  }

  /** Stops the watch when its last user is gone. */
  release(): void {
    if (--this.#users > 0) return;
    this.#users = 0;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Whether the loop stood still for at least `minMs` (ms) at some point after `sinceMs` (engine
   * time, epoch ms, as `engineTime.now()` gives it), as far as the ticks so far tell.
   */
  stalledAfter(sinceMs: number, minMs: number): boolean {
    // a loop, not some(): asked once per fetch
    for (const s of this.#stalls) if (s.endedAt > sinceMs && s.ms >= minMs) return true;
    return false;
  }

  /** One tick: a gap far longer than the period is a stall that has just ended. */
  private tick(): void {
    const now = performance.now();
    const gap = now - this.#lastTick;
    this.#lastTick = now;
    if (gap - TICK_MS < this.thresholdMs) return;
    this.#stalls.push({ endedAt: engineTime.now(), ms: gap - TICK_MS });
    if (this.#stalls.length > KEPT) this.#stalls.shift();
  }
}

/** The process's watch; a stall is recorded from 100 ms on, and each caller says what length matters to it. */
export const loopStalls = new LoopStalls(100);
