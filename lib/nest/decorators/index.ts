export * from './cron.decorator.js';
export * from './interval.decorator.js';
export * from './task-handler.decorator.js';
export type { ScheduleOptions, CronOptions, IntervalOptions } from './schedule-options.interface.js';
export * from './cron-expression.enum.js';
