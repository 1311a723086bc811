/**
 * Metrics (prom-client) and traces (@opentelemetry/api) of Chronos, both optional peer
 * dependencies loaded only when used. @publicApi
 */
export { ChronosMetrics, TASK_OUTCOMES, TRIGGER_OUTCOMES, type ChronosMetricsOptions, type MetricsRegistry } from './metrics.js';
export {
  configureTracing,
  parseTraceparent,
  startFireSpan,
  startProducerSpan,
  startConsumerSpan,
  tracingAvailable,
  type AttemptInfo,
  type ChronosSpan,
  type RemoteSpanContext,
  type TracingConfig,
} from './tracing.js';
export { MissingPeerDependencyError } from './optional.js';
