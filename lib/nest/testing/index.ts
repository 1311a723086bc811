/**
 * `@chronos/nest/testing`: the testing kit. `ChronosTestingModule.forRoot({ mode })` in a test
 * module instead of `ChronosModule.forRoot()`, and the injectable `ChronosTesting` to look at the
 * queues, run tasks and move the clock. Never loaded by `ChronosModule`.
 * @publicApi
 */
export { ChronosTestingModule, type ChronosTestingOptions } from './chronos-testing.module.js';
export { ChronosTesting } from './chronos-testing.service.js';
export type { ChronosTestingMode, DrainResult, Instant, PerformOptions, TaskTypeRef } from './testing-types.js';
export type { TaskOutcome } from './attempt.js';
export type { EnqueuedTask } from './testing-store.js';
export { ChronosTestingError } from './testing-error.js';
