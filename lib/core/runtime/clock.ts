import { engineTime } from './time.js';

/** A source of "now" in epoch ms (a test's fake clock: see scheduler/test-hooks.ts). @publicApi */
export interface Clock {
  /** The current instant, epoch ms. */
  now(): number;
}

/** The engine's clock: Redis time from the process's time source (runtime/time.ts). */
export const systemClock: Clock = { now: () => engineTime.now() };
