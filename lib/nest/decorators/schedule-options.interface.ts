import type { CatchUpPolicy, OverlapPolicy } from '../../core/scheduler/definition.js';
import type { PayloadClass } from '../payload-class.js';

/**
 * Options of `@Cron` and `@Interval`. Durations are milliseconds. The names `@nestjs/schedule`
 * users know (`name`, `timeZone`, `disabled`, `waitForCompletion`) mean the same here.
 * @publicApi
 */
export interface ScheduleOptions {
  /**
   * Schedule name: unique in the app and **stable across processes** (it is part of every
   * trigger's dedup key `<name>:<trigger-unix>` and, by default, the task type).
   * 1-200 characters of `[A-Za-z0-9_.:-]`, not `.` or `..`. @defaultValue `'ClassName.methodName'`
   */
  name?: string;
  /** IANA time zone of a cron expression (ignored by `@Interval`). @defaultValue the module's `timeZone` ('UTC') */
  timeZone?: string;
  /** Queue the triggers' tasks go to. @defaultValue the module's `queue` ('default') */
  queue?: string;
  /** Retries of a trigger's task after a failure. @defaultValue the module's `maxRetry` (25) */
  maxRetry?: number;
  /** Timeout of one attempt, ms (0 = none). @defaultValue the module's `timeout` (1800000) */
  timeout?: number;
  /**
   * Triggers that came due while no instance led (all down, or a crashed leader's TTL):
   * `'all'` fires each of them (late, with its own trigger instant), `'latest'` only the most
   * recent, `'none'` none. @defaultValue 'all'
   */
  catchUp?: CatchUpPolicy;
  /** Missed triggers older than this are never caught up, ms. @defaultValue 3600000 (1 h) */
  catchUpWindow?: number;
  /** Most missed triggers caught up at once (the newest are kept). @defaultValue 100 */
  catchUpCap?: number;
  /**
   * What a trigger does while the previous trigger's task is still live (pending, running or
   * waiting for a retry), fleet-wide: `'allow'` enqueues it; `'skip'` skips it (counted, logged);
   * `'buffer-one'` keeps one waiting, started when the previous task ends, and skips further ones;
   * `'cancel-previous'` enqueues it and aborts the previous task's `signal` with a
   * `TaskSupersededError` (that task is then acked, not retried). Temporal's AllowAll, Skip,
   * BufferOne, CancelOther (docs/nest.md). @defaultValue 'allow'
   */
  overlap?: OverlapPolicy;
  /**
   * Spread of the starts, ms (0 to 86,400,000; less than the period of an interval): each trigger's
   * task starts a deterministic shift in `[0, jitter)` after its instant, the same on every replica;
   * the trigger's dedup key and `triggerAt` stay nominal (README "Jitter, start and end, maxRuns"). @defaultValue 0
   */
  jitter?: number;
  /** No trigger before this instant (inclusive): epoch ms or a Date. */
  startAt?: number | Date;
  /** No trigger at or after this instant (exclusive): epoch ms or a Date. */
  endAt?: number | Date;
  /** The most triggers the schedule enqueues in total, fleet-wide (an integer ≥ 1). */
  maxRuns?: number;
  /**
   * The group of every trigger's task (enqueue option `group`: round-robin with the queue's other
   * groups, under its per-group limits). @defaultValue the static `group` of a `dispatch` payload class, of `payload`
   */
  group?: string;
  /**
   * Labels to find the schedule by (Inspector `schedulePage({ labels })`, CLI `schedule ls --label`,
   * the console), e.g. `{ tenant: 'acme' }`: limits as core's `ScheduleDefinition.labels`. A change of
   * labels alone does not change the triggers. @defaultValue none
   */
  labels?: Record<string, string>;
  /** `@nestjs/schedule`'s name for `overlap: 'skip'` (true) / `'allow'` (false); contradicting `overlap` is an error. */
  waitForCompletion?: boolean;
  /**
   * Not declared by this instance, so it does not fire unless another live instance declares
   * it. The method stays registered as the handler of the schedule's tasks. @defaultValue false
   */
  disabled?: boolean;
  /**
   * Make each trigger enqueue a task of this type (a string or a payload class) instead of
   * calling this method: it is delivered to every `@TaskHandler` of that type (fan-out when
   * there are several). The decorated method is then only the declaration and is never called.
   */
  dispatch?: string | PayloadClass;
  /** Payload of every trigger's task (JSON-serialisable, fixed at boot). @defaultValue null */
  payload?: unknown;
  /**
   * `@nestjs/schedule`'s opt-in to a distributed lock. Every Chronos schedule is distributed (a
   * leader plus a dedup key per trigger), so only `true` is accepted, as a no-op.
   */
  distributed?: true;
}

/** Options of `@Cron`. @publicApi */
export type CronOptions = ScheduleOptions;
/** Options of `@Interval`. @publicApi */
export type IntervalOptions = ScheduleOptions;

/** What `@Cron`/`@Interval` record on a method. @internal */
export interface ScheduleMetadata {
  kind: 'cron' | 'interval';
  /** Cron expression, or the interval (ms or a duration such as '10s'). */
  spec: string | number;
  options: ScheduleOptions;
}
