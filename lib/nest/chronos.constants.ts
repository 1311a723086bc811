/**
 * DI tokens and metadata keys of the NestJS face, all namespaced `chronos:`.
 */

/** The options object as the app passed it (forRoot value or forRootAsync factory result). @internal */
export const CHRONOS_MODULE_OPTIONS = Symbol('chronos:module-options');

/** The validated options ({@link ResolvedChronosOptions}). @internal */
export const CHRONOS_OPTIONS = Symbol('chronos:options');

/**
 * Provided by `ChronosTestingModule` (every mode): its presence tells the explorer that a second
 * Chronos module in the app is the testing kit beside the app's own `ChronosModule` import. @internal
 */
export const CHRONOS_TESTING_KIT = Symbol('chronos:testing-kit');

/** The one `EventBus` shared by the client, the worker and the scheduler of this app. @internal */
export const CHRONOS_EVENT_BUS = Symbol('chronos:event-bus');

/** Method metadata of `@Cron` / `@Interval` (an array: the explorer rejects more than one). */
export const SCHEDULE_METADATA = 'chronos:schedule';

/** Method metadata of `@TaskHandler` (an array: one method may handle several types). */
export const TASK_HANDLER_METADATA = 'chronos:task-handler';

/** Separator between a fanned-out type and its listener in a child task's type and id. */
export const FAN_OUT_SEPARATOR = '#';

/** Lifetime of a fan-out child's dedup key, ms (24 h): a retried dispatcher within it creates no second child. */
export const FAN_OUT_DEDUP_TTL_MS = 24 * 60 * 60_000;
