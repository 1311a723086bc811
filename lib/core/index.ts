/**
 * Chronos core: the framework-free engine (no NestJS import below this line).
 * @publicApi
 */
export * from './runtime/errors.js';
export * from './runtime/defaults.js';
export * from './runtime/events.js';
export * from './runtime/logger.js';
export * from './runtime/clock.js';
export { CLUSTER_FAILOVER_BOUND_MS, CLUSTER_RETRY_OPTIONS, type RedisConnection, type RedisClient } from './redis/connection.js';
export { QueueKeys, SchedulerKeys, GlobalKeys, CONSUMER_GROUP } from './redis/keys.js';
export { ChronosClient, type EnqueueOptions, type EnqueueResult, type BulkTask, type ClientOptions } from './queue/client.js';
export { ChronosServer, ShutdownAbort, type ServerOptions } from './worker/server.js';
export { Mux, type HandlerOptions, type Registration } from './worker/mux.js';
export { defaultBackoff, exponentialBackoff, taskWith, type Task, type TaskHandlerFn, type BackoffFn } from './queue/task.js';
export { Scheduler, type SchedulerOptions } from './scheduler/scheduler.js';
export {
  type ScheduleDefinition,
  type StoredSchedule,
  type CatchUpPolicy,
  type OverlapPolicy,
  triggerKey,
} from './scheduler/definition.js';
export {
  parseSpec,
  everySpec,
  parseDurationMs,
  nextTriggers,
  triggersBetween,
  type ScheduleSpec,
  type ParseSpecOptions,
} from './scheduler/spec.js';
export { listenForCancels, type CancelNotice, type CancelListener, type Cancellable } from './worker/cancel-listener.js';
export {
  recordFires,
  readFires,
  outcomeOfFire,
  HISTORY_LIMIT,
  HISTORY_TTL_MS,
  type FireRecord,
  type FireOutcome,
} from './scheduler/history.js';
export { TRIGGERS_BETWEEN_COUNT_LIMIT } from './scheduler/spec-base.js';
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
  type RedisInfo,
  type TaskFilter,
  type TaskInfo,
  type TaskPage,
  type TaskState,
  type ScheduleInfo,
  type LeaderInfo,
  type ServerInfo,
  type InstanceInfo,
} from './admin/inspector.js';
export * from './observability/index.js';
/** The health of one background service of a worker server or scheduler (their `health().services`). */
export type { ServiceHealth } from './runtime/service.js';
