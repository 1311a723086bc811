// The testing kit's public types (mode, task type, instant, perform and drain) and its instant parsing.
import type { EnqueueOptions } from '../../core/queue/client.js';
import type { PayloadClass } from '../payload-class.js';
import type { TaskOutcome } from './attempt.js';
import { ChronosTestingError } from './testing-error.js';
import { nearEpochProblem } from '../../core/runtime/options.js';

/** How the testing module runs tasks. @publicApi */
export type ChronosTestingMode = 'manual' | 'inline' | 'redis';

/** A task type: the type string or a payload class. @publicApi */
export type TaskTypeRef = string | PayloadClass;

/** An instant: epoch ms, a Date, or an ISO 8601 text. @publicApi */
export type Instant = number | Date | string;

/** Options of {@link ChronosTesting.perform} given a type and payload: the enqueue's, plus the attempt's fields. @publicApi */
export interface PerformOptions extends EnqueueOptions {
  /** Failed attempts before this one (to test the last attempt, pass `maxRetry`). @defaultValue 0 */
  retried?: number;
  /** As a trigger's task: the schedule name. */
  schedule?: string;
  /** As a trigger's task: the trigger instant. */
  triggerAt?: Instant;
}

/** What {@link ChronosTesting.drain} ran. @publicApi */
export interface DrainResult {
  /** Attempts that succeeded. */
  succeeded: number;
  /** Attempts that failed and were retried (later in the same drain, in virtual time). */
  retried: number;
  /** Tasks that ended dead. */
  dead: number;
  /** Every attempt's outcome, in the order they ran. */
  outcomes: TaskOutcome[];
}

/** Largest instant a Date holds, ms from the epoch either way (ECMA-262 TimeClip). */
const DATE_LIMIT_MS = 8.64e15;

/**
 * An instant as epoch ms.
 * @throws ChronosTestingError naming `name` and the value when it is not one a Date can hold, or when
 *   a number or a Date is before 1973-03-03: epoch seconds given as ms (it names the ms meant), as the
 *   engine refuses them; an ISO text says its date, and is taken as written.
 */
export function instant(v: Instant, name: string): number {
  const ms = v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : v;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > DATE_LIMIT_MS)
    throw new ChronosTestingError(
      `${name}: expected epoch ms (at most ±${DATE_LIMIT_MS}, a Date's range), a Date or an ISO 8601 text, got ${String(v)}`,
    );
  // fireDue(seconds, seconds) fired nothing and set the virtual clock to January 1970 (trial 47)
  const near = typeof v === 'string' ? undefined : nearEpochProblem(ms, v);
  if (near !== undefined) throw new ChronosTestingError(`${name}: ${near}`);
  return ms;
}
