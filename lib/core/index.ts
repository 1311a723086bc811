/**
 * Chronos core: the framework-free engine (no NestJS import below this line). What users call;
 * every name here is a conscious choice (test/unit/public-api.spec.ts lists them). The parts the
 * CLI, the console, the bench and the tests need beyond this are the `./internal` entry
 * (`lib/core/internal.ts`), which carries no compatibility promise.
 * @publicApi
 */
import { QueueClient } from './queue/client.js';

// every error a user may catch (all of errors.ts is public)
export * from './runtime/errors.js';
export { EventBus, type ChronosEvent, type ChronosEventListener, type OperatorAction, type ScheduleSkipReason } from './runtime/events.js';
export type { ChronosLogger } from './runtime/logger.js';
export type { Clock } from './runtime/clock.js';
export {
  CLUSTER_FAILOVER_BOUND_MS,
  CLUSTER_RETRY_OPTIONS,
  LOADING_POLL_MS,
  type RedisConnection,
  type UrlConnectionOptions,
  type RedisClient,
} from './redis/connection.js';
export { type QueueLimits, type QueueLimitsUpdate, type RateLimit, type GroupLimits, type GroupLimitsUpdate } from './queue/limits.js';
export {
  QueueClient,
  type EnqueueOptions,
  type EnqueueResult,
  type BulkTask,
  type ClientOptions,
  type DedupOptions,
} from './queue/client.js';
export { type DedupMode } from './redis/commands/queue.js';
export { ChronosServer, ShutdownAbort, type ServerHealth, type ServerOptions } from './worker/server.js';
export { Mux, type HandlerOptions, type Registration } from './worker/mux.js';
export { defaultBackoff, exponentialBackoff, taskWith, type Task, type TaskHandlerFn, type BackoffFn } from './queue/task.js';
export { Scheduler, type SchedulerOptions } from './scheduler/scheduler.js';
export type { AddSchedulesResult, RemoveSchedulesResult, UpsertSchedulesResult } from './admin/schedule-bulk.js';
export {
  type ScheduleDefinition,
  type StoredSchedule,
  type CatchUpPolicy,
  type OverlapPolicy,
  triggerKey,
} from './scheduler/definition.js';
export { parseSpec, nextTriggers, triggersBetween, type ScheduleSpec, type ParseSpecOptions } from './scheduler/spec.js';
export type { StoredBounds } from './scheduler/schedule-bounds.js';
export type { ScheduleBoundsInfo } from './admin/schedule-runs.js';
export type { FireRecord, FireOutcome } from './scheduler/history.js';
export {
  Inspector,
  TASK_STATES,
  type InspectorOptions,
  type ActOptions,
  type ActResult,
  type BackfillResult,
  type DayCounts,
  type DeadGroup,
  type DeadGroups,
  type FireInfo,
  type FireTaskState,
  type PauseNote,
  type QueueInfo,
  type GroupsView,
  type GroupCount,
  type RedisInfo,
  type TaskFilter,
  type TaskInfo,
  type TaskPage,
  type TaskState,
  type ScheduleInfo,
  type LeaderInfo,
  type ShardLeaseInfo,
  type ServerInfo,
  type InstanceInfo,
  type HistoryWindow,
  type HistoryPoint,
  type QueueHistory,
  type FleetHistory,
  type FireMark,
  type WindowFires,
  type ScheduleSilence,
  type ScheduleActivity,
  type AuditPage,
  type AuditQuery,
  type SchedulePage,
  type SchedulePageQuery,
  type ScheduleState,
} from './admin/inspector.js';
export type { AuditEntry } from './runtime/events.js';
export { ChronosMetrics, type ChronosMetricsOptions, type MetricsRegistry } from './observability/metrics.js';
export { configureTracing, type TracingConfig } from './observability/tracing.js';
export { MissingPeerDependencyError } from './observability/optional.js';

/**
 * The engine's client under its former name.
 * @deprecated Renamed {@link QueueClient}. In a NestJS app, inject `ChronosClient` from
 * `@chronos/nest` (the client plus payload classes), which keeps its name.
 */
export const ChronosClient = QueueClient;
/** @deprecated Renamed {@link QueueClient}. */
export type ChronosClient = QueueClient;
/** The health of one background service of a worker server or scheduler (their `health().services`). */
export type { ServiceHealth } from './runtime/service.js';
