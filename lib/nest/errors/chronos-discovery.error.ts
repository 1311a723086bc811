import { ChronosError } from '../../core/runtime/errors.js';

/** One problem found in a decorated method. */
export interface DiscoveryIssue {
  /** Where: `Class#method`. */
  readonly source: string;
  /** The whole line, starting with the source. */
  readonly message: string;
  /** The core error behind it, when there is one (InvalidScheduleError, DuplicateScheduleError, …). */
  readonly cause?: unknown;
}

/**
 * The decorated methods of the app are inconsistent: duplicate schedule or listener names,
 * invalid expressions or options, a decorator on a request-scoped provider. Thrown at boot
 * (`onModuleInit`), listing every problem at once, each naming `Class#method`.
 * @publicApi
 */
export class ChronosDiscoveryError extends ChronosError {
  /** @param issues Every problem found, each naming the decorated method (`Class#method`) it is about. */
  constructor(readonly issues: readonly DiscoveryIssue[]) {
    super(
      'CONFIG',
      `Chronos found ${issues.length} problem${issues.length === 1 ? '' : 's'} in decorated methods:\n  - ${issues.map((i) => i.message).join('\n  - ')}`,
    );
  }
}
