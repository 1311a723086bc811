import { ChronosError } from '../../core/runtime/errors.js';

/**
 * The options of `ChronosModule.forRoot` / `forRootAsync` are invalid. Thrown at boot (when the
 * module's providers are created), listing every problem at once; unknown keys are problems too.
 * @publicApi
 */
export class ChronosConfigError extends ChronosError {
  /**
   * @param issues Every problem found in the options, one line each, naming the option and the value it had.
   * @param options `cause`: the engine's error behind the problems, when there is one.
   */
  constructor(
    readonly issues: readonly string[],
    options?: ErrorOptions,
  ) {
    super(
      'CONFIG',
      `ChronosModule options are invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n  - ${issues.join('\n  - ')}`,
      options,
    );
  }
}
