/** A source of "now" in epoch ms; tests and the skew scenarios inject their own. @publicApi */
export interface Clock {
  /** The current instant, epoch ms. */
  now(): number;
}

/** The system clock (Date.now). */
export const systemClock: Clock = { now: () => Date.now() };
