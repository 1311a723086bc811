import type { Logger } from '@nestjs/common';
import type { ChronosLogger } from '../core/runtime/logger.js';

/** Adapts a Nest `Logger` to the engine's {@link ChronosLogger} (errors keep their stack). @internal */
export function toChronosLogger(logger: Logger): ChronosLogger {
  return {
    log: (m) => logger.log(m),
    warn: (m) => logger.warn(m),
    error: (m, err) => (err instanceof Error && err.stack ? logger.error(m, err.stack) : logger.error(m)),
    debug: (m) => logger.debug(m),
  };
}
