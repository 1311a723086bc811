/**
 * `@chronos/nest/internal`: the engine's parts that the CLI, the web console, the bench and the
 * tests reach beyond the public API (`./core`): the Redis key layout, defaults, the fire history's
 * writer, tracing spans, the clock and logger helpers. No compatibility promise: any of these may
 * change in a minor or patch release. Everything public is re-exported too, so one import serves.
 * @internal
 */
export * from './index.js';
export { DEFAULTS } from './runtime/defaults.js';
export { consoleLogger, FailureLog } from './runtime/logger.js';
export { systemClock } from './runtime/clock.js';
export { QueueKeys, SchedulerKeys, GlobalKeys, CONSUMER_GROUP } from './redis/keys.js';
export { everySpec, parseDurationMs } from './scheduler/spec.js';
export { TRIGGERS_BETWEEN_COUNT_LIMIT } from './scheduler/spec-base.js';
export { recordFires, readFires, HISTORY_LIMIT, HISTORY_TTL_MS } from './scheduler/history.js';
export { listenForCancels, type CancelNotice, type CancelListener, type Cancellable } from './worker/cancel-listener.js';
export { TASK_OUTCOMES, TRIGGER_OUTCOMES } from './observability/metrics.js';
export {
  parseTraceparent,
  startFireSpan,
  startProducerSpan,
  startConsumerSpan,
  tracingAvailable,
  type AttemptInfo,
  type ChronosSpan,
  type RemoteSpanContext,
} from './observability/tracing.js';
