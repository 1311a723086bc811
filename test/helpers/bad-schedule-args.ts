// Wrong arguments of SchedulerService's runtime schedule calls and the typed error each must give (trial 23):
// the same through the engine-backed service (test/nest/scheduler-bulk.spec.ts) and the testing kit (testing-kit.spec.ts).
import type { SchedulerService } from '../../lib/index.js';

const NAME = 'name: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or ".."';

/** Each call, and the class and message of the error it must reject with. */
export const BAD_SCHEDULE_ARGS: [string, (s: SchedulerService) => Promise<unknown>, string, string][] = [
  [
    'removeSchedules(null)',
    (s) => s.removeSchedules(null as never),
    'InvalidScheduleError',
    'Invalid schedule: removeSchedules: expected an array of names, got null',
  ],
  ['removeSchedule(null)', (s) => s.removeSchedule(null as never), 'InvalidScheduleError', `Invalid schedule: ${NAME}, got null`],
  ['pauseSchedule("a b")', (s) => s.pauseSchedule('a b'), 'InvalidScheduleError', `Invalid schedule "a b": ${NAME}`],
  ['resumeSchedule(5)', (s) => s.resumeSchedule(5 as never), 'InvalidScheduleError', `Invalid schedule: ${NAME}, got 5`],
  ['triggerNow(null)', (s) => s.triggerNow(null as never), 'InvalidScheduleError', `Invalid schedule: ${NAME}, got null`],
  [
    'upsertSchedules(defs, null)',
    (s) => s.upsertSchedules([{ name: 'x', spec: '@daily' }], null as never),
    'InvalidOptionsError',
    'Invalid upsertSchedules options (1 problem):\n  - expected an object { force?: boolean }, got null',
  ],
  [
    'upsertSchedules(defs, { forse: true })',
    (s) => s.upsertSchedules([{ name: 'x', spec: '@daily' }], { forse: true } as never),
    'InvalidOptionsError',
    'Invalid upsertSchedules options (1 problem):\n  - unknown option "forse"',
  ],
  [
    'addSchedule(def, { force: 1 })',
    (s) => s.addSchedule({ name: 'x', spec: '@daily' }, { force: 1 } as never),
    'InvalidOptionsError',
    'Invalid addSchedule options (1 problem):\n  - force: expected true or false, got 1',
  ],
];

/** What each call of {@link BAD_SCHEDULE_ARGS} gave: [call, error class, message], or [call, 'resolved']. */
export async function badScheduleArgs(s: SchedulerService): Promise<string[][]> {
  const out: string[][] = [];
  for (const [call, run] of BAD_SCHEDULE_ARGS) {
    const err = await run(s).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    out.push(err ? [call, err.constructor.name, err.message] : [call, 'resolved']);
  }
  return out;
}

/** What {@link badScheduleArgs} must give. */
export const BAD_SCHEDULE_ERRORS = BAD_SCHEDULE_ARGS.map(([call, , cls, message]) => [call, cls, message]);
