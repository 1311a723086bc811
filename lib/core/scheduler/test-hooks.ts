import type { Clock } from '../runtime/clock.js';

/**
 * The key of the scheduler's test hooks in its options object: a symbol that is not exported from
 * the package, so the hooks are no part of the public {@link SchedulerOptions} (the option check
 * looks at string keys only). The engine's own tests pass `{ ...options, [SCHEDULER_TEST_HOOKS]: hooks }`.
 */
export const SCHEDULER_TEST_HOOKS = Symbol('chronos.scheduler.testHooks');

/**
 * Hooks for the engine's own tests (fake-clock DST scenarios); never set in production. (Moments
 * of the firing loop are test signals: `Scheduler.signals`, `tick.start` / `tick.done`.)
 */
export interface SchedulerTestHooks {
  /**
   * Decide what is due by `clock` instead of Redis `TIME` (a fake clock, epoch ms): fire.lua is told
   * that instant, and trigger tasks carry no stale-task fields (workers judge those by Redis time).
   * A skewed clock would fire early.
   */
  clock?: Clock;
}

/** The test hooks of a scheduler's options, if any. */
export function testHooksOf(options: object): SchedulerTestHooks {
  return (options as { [SCHEDULER_TEST_HOOKS]?: SchedulerTestHooks })[SCHEDULER_TEST_HOOKS] ?? {};
}
