/**
 * An estimate of (Redis server time − local clock), ms, from the round trips Redis answers with
 * its `TIME`. It keeps the sample of the shortest round trip (the least skewed by network delay)
 * and lets it age out every {@link AGE_EVERY} samples, since clocks drift. A component that finds
 * its estimate ran ahead (Redis refused a trigger as not yet due) corrects it at once.
 */
export class ClockOffset {
  #offsetMs = 0;
  #bestRttMs = Infinity;
  #samples = 0;

  /** The current estimate of (Redis time − local clock), ms; 0 before the first sample. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /**
   * Takes one sample of (Redis time − local clock), ms, measured over a round trip of `rttMs`.
   * It replaces the estimate when its round trip is no longer than the best so far, or on every
   * {@link AGE_EVERY}th sample (then its round trip becomes the best).
   */
  sample(offsetMs: number, rttMs: number): void {
    this.#samples++;
    if (rttMs <= this.#bestRttMs || this.#samples % AGE_EVERY === 0) {
      this.#bestRttMs = rttMs;
      this.#offsetMs = offsetMs;
    }
  }

  /** Sets the estimate to an offset known to be better (ms), e.g. Redis's own time in a reply; the best round trip stays. */
  correct(offsetMs: number): void {
    this.#offsetMs = offsetMs;
  }
}

/** Every this many samples, the newest replaces the estimate whatever its round trip (clocks drift). */
const AGE_EVERY = 20;
