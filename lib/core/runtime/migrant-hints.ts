/**
 * What to use instead of an option of BullMQ (or Sidekiq) given to a Chronos door that refuses it,
 * said after `unknown option "<key>"` (OptionProblems.unknownKeys). The same mapping as the README's
 * "Coming from BullMQ or Sidekiq" and docs/nest.md's "Options Chronos does not accept": a migrant
 * reads it where the error is, not only there (trial 47: an enqueue's `attempts` said only
 * `unknown option "attempts"`). One table per door: a key means something else at each.
 */

/** Job options of `queue.add(name, data, opts)` / Sidekiq's `set(…)`, given to `enqueue`'s options. */
export const ENQUEUE_KEY_HINTS: Readonly<Record<string, string>> = {
  attempts: 'use `maxRetry`, the retries after the first attempt: attempts - 1',
  retry: 'use `maxRetry`; `retry: false` is `maxRetry: 0`',
  retries: 'use `maxRetry`',
  jobId: 'use `taskId`',
  backoff: 'a retry backoff is per handler or server: `handle(type, fn, { backoff: (retried) => ms })`',
  priority: 'no per-task priority: give urgent tasks a queue of their own, served with a higher weight or `strictPriority`',
  lifo: 'no per-task order: give such tasks a queue of their own',
  repeat: 'a repeating task is a schedule: `Scheduler.register` / `addSchedule({ name, spec, type, payload })`',
  deduplication: "use `dedup: { key, ttl, mode }`, whose `key` is BullMQ's `id`",
  removeOnComplete: 'finished tasks always leave Redis',
  removeOnFail: "dead tasks are kept, capped by the server's `deadMaxCount` and `deadMaxAge`",
  delayUntil: 'use `processAt`: epoch ms or a Date',
};

/** BullMQ's `deduplication: { id, ttl, extend, replace }` keys given to `dedup`. */
export const DEDUP_KEY_HINTS: Readonly<Record<string, string>> = {
  id: 'use `key`',
  extend: 'use `mode: "debounce"` with a `delay`',
  replace: 'use `mode: "replace"` with a `delay` or `processAt`; `mode: "debounce"` moves its start too',
};

/** BullMQ's `addBulk([{ name, data, opts }])` keys given to `enqueueBulk`'s tasks. */
export const BULK_TASK_KEY_HINTS: Readonly<Record<string, string>> = {
  name: 'use `type`',
  data: 'use `payload`',
  opts: 'use `options`',
};

/** BullMQ `Worker` options given to a `ChronosServer`. */
export const SERVER_KEY_HINTS: Readonly<Record<string, string>> = {
  limiter: "a queue's rate limit is fleet-wide: `setQueueLimits(queue, { rate: { max, duration } })`",
  lockDuration: 'use `visibilityTimeout`: running handlers extend their claim by themselves',
  stalledInterval: 'use `recoverInterval`',
  maxStalledCount: 'use `maxDeliveries`',
  autorun: 'a server fetches from `start()` on',
  removeOnComplete: 'finished tasks always leave Redis',
  removeOnFail: 'dead tasks are kept, capped by `deadMaxCount` and `deadMaxAge`',
};

/** Processor or job options given to `handle(type, fn, options)`. */
export const HANDLER_KEY_HINTS: Readonly<Record<string, string>> = {
  concurrency: "handlers at once are the server's `concurrency`; a queue's fleet-wide limit is `setQueueLimits(queue, { concurrency })`",
  attempts: 'retries are the enqueue option `maxRetry`: attempts - 1',
  maxRetry: "retries are the enqueue option `maxRetry`, or the client's `defaults.maxRetry`",
  timeout: "the time limit of an attempt is the enqueue option `timeout` in ms, or the client's `defaults.timeout`",
  limiter: "a queue's rate limit is fleet-wide: `setQueueLimits(queue, { rate: { max, duration } })`",
};

/** BullMQ `Worker` / `Queue` options given to the NestJS module (`ChronosModule.forRoot`). */
export const MODULE_KEY_HINTS: Readonly<Record<string, string>> = {
  limiter: "a queue's rate limit is fleet-wide: `queues: { q: { rate: { max, duration } } }`",
  lockDuration: 'use `visibilityTimeout`: running handlers extend their claim by themselves',
  stalledInterval: 'use `recoverInterval`',
  maxStalledCount: 'use `maxDeliveries`',
  defaultJobOptions: 'use the module options `maxRetry`, `timeout` and `queue`',
  attempts: 'use `maxRetry`, the retries after the first attempt: attempts - 1',
};

/** BullMQ `Queue` options given to a `QueueClient`. */
export const CLIENT_KEY_HINTS: Readonly<Record<string, string>> = {
  defaultJobOptions: 'use `defaults: { queue, maxRetry, timeout }`',
};
