import { SCHEDULE_METADATA } from '../chronos.constants.js';
import { appendMetadata } from './append-metadata.js';
import type { CronOptions } from './schedule-options.interface.js';

/**
 * Runs the method on a cron schedule, once per trigger across every instance of the app: the
 * leader enqueues one task per trigger (id `<name>:<trigger-unix>`) and any worker runs the
 * method with it (`(task: Task) => …`). 5-field cron (`'0 3 * * *'`, `'30 8 * * MON-FRI'`, steps such as every 15th minute, names
 * `MON`/`JAN`) or a descriptor (`'@daily'`, `'@hourly'`); seconds are not supported — use
 * `@Interval('30s')`. The expression and time zone are validated at boot (an invalid one is a
 * `ChronosDiscoveryError` naming `Class#method`).
 *
 * ```ts
 * @Cron('0 3 * * *', { timeZone: 'Europe/Budapest' })
 * async nightlyReport(task: Task) { … }
 * ```
 * @publicApi
 */
export function Cron(expression: string, options: CronOptions = {}): MethodDecorator {
  return (_target, _key, descriptor) => {
    appendMetadata(SCHEDULE_METADATA, { kind: 'cron', spec: expression, options }, descriptor);
  };
}
