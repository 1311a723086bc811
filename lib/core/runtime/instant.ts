/**
 * A timer for an instant of a time source (the engine's estimate of Redis time), with sub-ms
 * precision. A Node timer is whole ms on the event loop's cached clock: it may fire up to ~1 ms
 * before its delay (the loop's clock was stale when it was armed) or ~1 ms after (rounding), so a
 * timer armed with a margin for the first fires ~2 ms late on average. This one arms a Node timer
 * for the bulk of the wait, {@link SPIN_MS} short of the instant, then takes turns of the event loop
 * (`setImmediate`: I/O and other timers run meanwhile) until the time source reaches the instant:
 * it fires within a loop turn after the instant, never before it by the time source.
 * Units: epoch ms.
 */

/** The last part of a wait taken in turns of the event loop instead of a Node timer, ms (at most this much spinning per instant). */
export const SPIN_MS = 2;

/** A pending {@link atInstant} timer. */
export interface InstantTimer {
  /** Stops it: `fn` is not called (a no-op once it was). */
  cancel(): void;
}

/**
 * Calls `fn` once, as soon as `clock()` (epoch ms, with its fraction) is at or past `at`; never
 * synchronously (at least one turn of the event loop first, even for an instant already past).
 */
export function atInstant(at: number, clock: () => number, fn: () => void): InstantTimer {
  let timer: NodeJS.Timeout | undefined;
  let turn: NodeJS.Immediate | undefined;
  let done = false;
  const check = () => {
    timer = turn = undefined;
    if (done) return;
    const left = at - clock();
    if (left <= 0) {
      done = true;
      fn();
    } else if (left > SPIN_MS) timer = setTimeout(check, Math.floor(left - SPIN_MS) + 1);
    else turn = setImmediate(check);
  };
  turn = setImmediate(check);
  return {
    cancel() {
      done = true;
      clearTimeout(timer);
      if (turn) clearImmediate(turn);
    },
  };
}
