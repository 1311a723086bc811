import { EventBus } from './events.js';
import type { ChronosLogger } from './logger.js';
import { Signals } from './signals.js';
import { engineTime, type RedisTime } from './time.js';

/**
 * What every part of a worker server or scheduler is given: the one time source, the logger, the
 * event bus and the test signals. The server and the scheduler each build one and hand it down.
 */
export interface Runtime {
  /** The process's time source (Redis time carried by the monotonic clock). */
  readonly time: RedisTime;
  readonly logger: ChronosLogger;
  /** The bus of public events (`task.*`, `schedule.*`, `leader.*`). */
  readonly events: EventBus;
  /** Test signals: moments a test can await (see {@link Signals}). */
  readonly signals: Signals;
}

/** A runtime on the process's time source, with a bus and a signal hub of its own unless given. */
export function createRuntime(parts: { logger: ChronosLogger; events?: EventBus; signals?: Signals; time?: RedisTime }): Runtime {
  return {
    time: parts.time ?? engineTime,
    logger: parts.logger,
    events: parts.events ?? new EventBus(),
    signals: parts.signals ?? new Signals(),
  };
}
