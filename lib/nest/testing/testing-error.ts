/**
 * A misuse of the testing kit, or an expectation that failed (`expectEnqueued`), or a `drain` that
 * did not end (a loop). The message says what was expected and what the kit holds.
 * @publicApi
 */
export class ChronosTestingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChronosTestingError';
  }
}
