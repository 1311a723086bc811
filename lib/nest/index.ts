/**
 * The NestJS face of Chronos: module, decorators, injectable services, health indicator.
 * @publicApi
 */
export { ChronosModule } from './chronos.module.js';
export * from './decorators/index.js';
export * from './errors/index.js';
export type {
  ChronosModuleOptions,
  ChronosModuleAsyncOptions,
  ChronosOptionsFactory,
  QueueOptions,
} from './options/chronos-options.interface.js';
export { ChronosClient, type NestBulkTask } from './services/chronos.client.js';
export { SchedulerService } from './services/scheduler.service.js';
export { WorkerService } from './services/worker.service.js';
export { InspectorService, type ChronosOverview } from './services/inspector.service.js';
export { ChronosHealthIndicator, type ChronosHealthDetails, type ChronosHealthResult } from './health/chronos-health.indicator.js';
export { type PayloadClass, taskTypeOf } from './payload-class.js';
export type { FanOutEnvelope } from './discovery/fan-out.js';
export type { ChronosConsoleOptions } from './console/console-options.js';
