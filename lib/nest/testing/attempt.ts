/**
 * One attempt of a task in the kit, settled by the engine's rules (lib/core/worker/executor.ts):
 * resolved → succeeded; thrown or rejected → dead when it is a `NonRetryableError` or the retry
 * budget is spent (`retried >= maxRetry`), else retried after the handler's `backoff`, else the
 * module's, else the default (a backoff that throws or returns a bad number falls back to the
 * default, as in the engine); the timeout aborts the signal with a `TaskTimeoutError`; a type with
 * no handler bounces (1 s, 2 s, 4 s) and is dead after min(maxRetry, 3) bounces. An attempt whose
 * signal a newer trigger of its schedule aborted (overlap `cancel-previous`: a `TaskSupersededError`)
 * and that did not succeed is superseded: neither retried nor dead.
 */
import { HandlerNotFoundError, TaskSupersededError, TaskTimeoutError } from '../../core/runtime/errors.js';
import { DEAD_REASON } from '../../core/redis/protocol.js';
import { checkedBackoffDelay, defaultBackoff, type BackoffFn, type Task } from '../../core/queue/task.js';
import type { Mux } from '../../core/worker/mux.js';
import { isNonRetryable } from '../../core/worker/error-text.js';
import type { EnqueuedTask } from './testing-store.js';

/** How many times a task of a type without handler bounces before it is dead (executor.ts NO_HANDLER_BOUNCES). */
const NO_HANDLER_BOUNCES = 3;

/**
 * What one attempt of a task came to, as the engine would record it. Instants are epoch ms of the
 * kit's virtual clock.
 * @publicApi
 */
export type TaskOutcome<T = unknown> =
  | {
      /** The handler resolved: the task is done. */
      outcome: 'succeeded';
      /** The task as it ran. */
      task: EnqueuedTask<T>;
    }
  | {
      /** The handler failed with retries left: the engine would run it again at `retryAt`. */
      outcome: 'retry';
      /** The task as it ran (its `retried` is the failed attempt's). */
      task: EnqueuedTask<T>;
      /** What the handler threw (a `TaskTimeoutError` when its timeout elapsed). */
      error: unknown;
      /** The backoff the engine's rules give, ms. */
      delayMs: number;
      /** When the retry is due (virtual now + `delayMs`). */
      retryAt: number;
    }
  | {
      /**
       * A newer trigger of its schedule superseded the task while it ran (overlap `cancel-previous`:
       * its signal was aborted with a `TaskSupersededError`) and it did not succeed: the engine acks
       * it, never retried, never dead.
       */
      outcome: 'superseded';
      /** The task as it ran. */
      task: EnqueuedTask<T>;
      /** What the handler threw (often the signal's reason). */
      error: unknown;
      /** Task id of the superseding trigger, `<schedule>:<trigger-unix>`. */
      supersededBy: string;
    }
  | {
      /** The handler failed for good: the task is dead. */
      outcome: 'dead';
      /** The task as it ran. */
      task: EnqueuedTask<T>;
      /** What the handler threw (a `HandlerNotFoundError` when its type has no handler). */
      error: unknown;
      /** Why it is dead: `retries`, `non-retryable`, `timeout` or `no-handler` (the engine's DEAD_REASON). */
      reason: 'retries' | 'non-retryable' | 'timeout' | 'no-handler';
    };

/** The handler's view of a task: the engine's `Task` fields and an abort signal. */
function taskView(t: EnqueuedTask, signal: AbortSignal): Task {
  const view: Task = {
    id: t.id,
    type: t.type,
    payload: structuredClone(t.payload),
    queue: t.queue,
    retried: t.retried,
    maxRetry: t.options.maxRetry,
    timeoutMs: t.options.timeout,
    enqueuedAt: t.enqueuedAt,
    signal,
  };
  if (t.schedule !== undefined) Object.assign(view, { schedule: t.schedule, triggerAt: t.triggerAt });
  if (t.group !== undefined) Object.assign(view, { group: t.group });
  return view;
}

/**
 * Runs the handler of `task` once (its timeout in real ms) and settles the outcome at virtual `now`;
 * `ctrl` is the attempt's abort controller (the kit aborts it when a newer trigger supersedes the task). @internal
 */
export async function runAttempt(
  task: EnqueuedTask,
  mux: Mux,
  moduleBackoff: BackoffFn,
  now: number,
  ctrl = new AbortController(),
): Promise<TaskOutcome> {
  const reg = mux.get(task.type);
  if (!reg) {
    const error = new HandlerNotFoundError(task.type);
    if (task.retried >= Math.min(task.options.maxRetry, NO_HANDLER_BOUNCES))
      return { outcome: 'dead', task, error, reason: DEAD_REASON.noHandler };
    const delayMs = 1000 * 2 ** task.retried;
    return { outcome: 'retry', task, error, delayMs, retryAt: now + delayMs };
  }
  const view = taskView(task, ctrl.signal);
  let timer: NodeJS.Timeout | undefined;
  let error: unknown;
  let ok = true;
  try {
    const run = Promise.resolve().then(() => reg.fn(view));
    if (task.options.timeout > 0) {
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new TaskTimeoutError(task.id, task.options.timeout);
          ctrl.abort(err);
          reject(err);
        }, task.options.timeout);
        timer.unref();
      });
      await Promise.race([run, expired]);
    } else await run;
  } catch (err) {
    ok = false;
    error = err;
  } finally {
    clearTimeout(timer);
  }
  if (ok) return { outcome: 'succeeded', task };
  const reason: unknown = ctrl.signal.reason;
  if (reason instanceof TaskSupersededError) return { outcome: 'superseded', task, error, supersededBy: reason.supersededBy };
  if (isNonRetryable(error) || task.retried >= task.options.maxRetry) {
    const reason = isNonRetryable(error)
      ? DEAD_REASON.nonRetryable
      : error instanceof TaskTimeoutError
        ? DEAD_REASON.timeout
        : DEAD_REASON.retries;
    return { outcome: 'dead', task, error, reason };
  }
  let delay: number;
  try {
    delay = checkedBackoffDelay((reg.options.backoff ?? moduleBackoff)(task.retried, error, view), now);
  } catch {
    delay = defaultBackoff(task.retried, error, view);
  }
  const delayMs = Math.round(delay);
  return { outcome: 'retry', task, error, delayMs, retryAt: now + delayMs };
}
