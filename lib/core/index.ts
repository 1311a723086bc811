/**
 * Chronos core: the framework-free engine (no NestJS import below this line).
 * @publicApi
 */
export * from './errors.js';
export * from './defaults.js';
export * from './events.js';
export * from './logger.js';
export * from './clock.js';
export { type RedisConnection, type RedisClient } from './redis/connection.js';
export { QueueKeys, SchedulerKeys, GlobalKeys, CONSUMER_GROUP } from './redis/keys.js';
export { ChronosClient, type EnqueueOptions, type EnqueueResult, type BulkTask, type ClientOptions } from './queue/client.js';
export { ChronosServer, ShutdownAbort, type ServerOptions } from './queue/server.js';
export { Mux, type HandlerOptions } from './queue/mux.js';
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
export {
  Inspector,
  type InspectorOptions,
  type QueueInfo,
  type TaskInfo,
  type TaskState,
  type ScheduleInfo,
  type LeaderInfo,
  type ServerInfo,
  type InstanceInfo,
} from './inspector/inspector.js';
