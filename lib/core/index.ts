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
export { defaultBackoff, exponentialBackoff, type Task, type TaskHandlerFn, type BackoffFn } from './queue/task.js';
