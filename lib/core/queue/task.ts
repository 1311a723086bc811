import { show } from '../runtime/options.js';
import { INSTANT_LIMIT_MS } from '../scheduler/spec-bounded.js';

/**
 * What a handler receives. Instants are epoch ms.
 * @publicApi
 */
export interface Task<T = unknown> {
  /** Stable across retries and recoveries, so handlers can be idempotent. */
  readonly id: string;
  /** The task's type, which selected this handler. */
  readonly type: string;
  /** The payload given at enqueue, decoded from its JSON (`null` when none was given). */
  readonly payload: T;
  /** The queue the task was fetched from. */
  readonly queue: string;
  /** Failed attempts before this one (0 on the first attempt). */
  readonly retried: number;
  /** Retries allowed before the task is dead. */
  readonly maxRetry: number;
  /** Timeout of this attempt, ms (0 = none); `signal` aborts when it elapses. */
  readonly timeoutMs: number;
  /** Aborts when the task's timeout elapses or the server shuts down; `signal.reason` says which. */
  readonly signal: AbortSignal;
  /** When the task was first enqueued. */
  readonly enqueuedAt: number;
  /** For tasks a schedule trigger enqueued: the schedule name. */
  readonly schedule?: string;
  /** For tasks a schedule trigger enqueued: the trigger instant (its dedup key is `<schedule>:<triggerAt / 1000>`). */
  readonly triggerAt?: number;
  /** The task's group (enqueue option `group`), when it has one: tasks of a queue's groups are served round-robin. */
  readonly group?: string;
}

/**
 * A view of `task` with some fields replaced (e.g. the payload rehydrated into a class), as a
 * plain object whose `signal` is still the task's. Use it instead of `{ ...task }`: a spread does
 * not copy `signal` (a getter). @publicApi
 */
export function taskWith<T>(task: Task, changes: Partial<Omit<Task<T>, 'signal'>>): Task<T> {
  return {
    id: task.id,
    type: task.type,
    payload: task.payload as T,
    queue: task.queue,
    retried: task.retried,
    maxRetry: task.maxRetry,
    timeoutMs: task.timeoutMs,
    enqueuedAt: task.enqueuedAt,
    schedule: task.schedule,
    triggerAt: task.triggerAt,
    group: task.group,
    ...changes,
    get signal() {
      return task.signal;
    },
  };
}

/** A task handler: resolve = done, throw/reject = failed (retried or dead). */
export type TaskHandlerFn<T = unknown> = (task: Task<T>) => unknown;

/**
 * Delay before a retry, ms, given the failed attempts so far (`retried`, 0 on the first failure),
 * the error and the task. Returned synchronously: a function that throws, or returns anything but a
 * finite number >= 0 (a promise included: no `async` backoff), is logged and the default backoff is used.
 */
export type BackoffFn = (retried: number, error: unknown, task: Task) => number;

/**
 * The default backoff: Sidekiq's formula, as asynq uses it (asynq `DefaultRetryDelayFunc`):
 * `retried^4 + 15 + rand(0..29) * (retried + 1)` seconds.
 */
export const defaultBackoff: BackoffFn = (retried) => {
  const n = retried;
  const seconds = n ** 4 + 15 + Math.floor(Math.random() * 30) * (n + 1);
  return seconds * 1000;
};

/**
 * Exponential backoff `baseMs * 2^retried`, capped at `maxMs`, with optional jitter in [0, 1]
 * (±jitter/2 of the delay).
 */
export function exponentialBackoff(baseMs: number, maxMs = Infinity, jitter = 0): BackoffFn {
  return (retried) => {
    const d = Math.min(maxMs, baseMs * 2 ** retried);
    return Math.max(0, Math.round(d * (1 + jitter * (Math.random() - 0.5))));
  };
}

/**
 * The delay a backoff function returned, checked: a finite number of ms >= 0 whose due instant
 * (`nowMs` + delay) is a valid Date, as an enqueue's `delay` must be (a larger one was stored as a
 * due time Redis could not give back: the retry event's `retryAt` came out negative).
 * A promise (an `async` backoff; BullMQ's strategies may return one) is refused too, and a rejection of
 * it is handled here: left alone, it was an unhandled rejection, which ends the worker's process (trial 33).
 * @throws TypeError naming the value; the worker then logs it and uses the default backoff.
 */
export function checkedBackoffDelay(delay: unknown, nowMs: number): number {
  if (typeof (delay as PromiseLike<unknown> | null)?.then === 'function') {
    (delay as PromiseLike<unknown>).then(undefined, () => undefined);
    throw new TypeError('backoff returned a promise: it must return the delay in ms itself (a number, not a Promise of one)');
  }
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) throw new TypeError(`backoff returned ${show(delay)}`);
  if (nowMs + delay >= INSTANT_LIMIT_MS) throw new TypeError(`backoff returned ${show(delay)} ms, a due instant past the year 275760`);
  return delay;
}
