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

/**
 * The error of an act on the kit after `module.close()` (the app's providers are shut down; the real
 * `ChronosClient` rejects an enqueue after close too). @internal
 */
export function closedError(method: string): ChronosTestingError {
  return new ChronosTestingError(
    `${method}: the testing module was closed (module.close()): nothing runs or is enqueued after it. ` +
      'Act before the close, or take ChronosTesting and the services from the module of the current test (module.get(...) after its init()).',
  );
}
