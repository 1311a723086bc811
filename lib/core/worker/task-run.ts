// One task being run (the handler's view of it), split from executor.ts, which runs it.
import { TaskCancelledError, TaskSupersededError, TaskTimeoutError } from '../runtime/errors.js';
import type { QueueKeys } from '../redis/keys.js';
import { META } from '../redis/protocol.js';
import type { StreamTask } from '../queue/codec.js';
import type { Task } from '../queue/task.js';
import { engineTime } from '../runtime/time.js';

/** What the executor needs to know of a queue. */
export interface QueueRef {
  readonly name: string;
  readonly keys: QueueKeys;
}

/**
 * One task being run, and the handler's view of it ({@link Task}). Its abort signal is created
 * only when the handler reads it (or when it must abort): most handlers never look at it, and one
 * object per task keeps the per-task cost low.
 * @internal `abandoned`, `slotAnnounced`, `slotAt`, `aborted`, `cancelled`, `superseded`, `abort()`, `entry` and `ref` are the server's, not the handler's.
 */
export class TaskRun implements Task {
  readonly id: string;
  readonly type: string;
  readonly queue: string;
  readonly retried: number;
  readonly maxRetry: number;
  readonly timeoutMs: number;
  readonly enqueuedAt: number;
  readonly schedule?: string;
  readonly triggerAt?: number;
  readonly group?: string;
  /** Set when a shutdown gave the task back: its outcome is ignored. */
  abandoned = false;
  /** Set when its fleet-wide slot was freed and announced while its handler ran on (`Slots.recorded`): not again at its finish. */
  slotAnnounced = false;
  /** Its place in the slot table's runs in flight (`Slots`); -1 when not in them. */
  slotAt = -1;
  /** When the task started (epoch ms). */
  readonly startedAt = engineTime.now();
  #ctrl?: AbortController;
  #reason?: unknown;

  constructor(
    readonly ref: QueueRef,
    readonly entry: StreamTask,
    readonly payload: unknown,
  ) {
    const m = entry.meta;
    this.id = entry.id;
    this.type = entry.type;
    this.queue = ref.name;
    this.retried = m[META.retried];
    this.maxRetry = m[META.maxRetry];
    this.timeoutMs = m[META.timeoutMs];
    this.enqueuedAt = m[META.enqueuedAt];
    const schedule = m[META.schedule];
    const triggerAt = m[META.triggerAt];
    if (schedule !== undefined) this.schedule = schedule;
    if (triggerAt !== undefined) this.triggerAt = triggerAt;
    const group = m[META.group];
    if (group !== undefined) this.group = group;
  }

  get signal(): AbortSignal {
    if (!this.#ctrl) {
      this.#ctrl = new AbortController();
      if (this.#reason !== undefined) this.#ctrl.abort(this.#reason);
    }
    return this.#ctrl.signal;
  }

  /** True once its signal was aborted (or is to abort when read), for whatever reason: a cancel, its timeout, a newer trigger, a shutdown. */
  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  /** True when an operator cancelled the task (its signal aborted with a TaskCancelledError): its entry is dead already. */
  get cancelled(): boolean {
    return this.#reason instanceof TaskCancelledError;
  }

  /** True when its timeout elapsed (its signal aborted with a TaskTimeoutError): the failure is recorded, not a shutdown's to give back. */
  get timedOut(): boolean {
    return this.#reason instanceof TaskTimeoutError;
  }

  /** True when a newer trigger of its schedule superseded the task (overlap `cancel-previous`): its end is not a failure. */
  get superseded(): boolean {
    return this.#reason instanceof TaskSupersededError;
  }

  abort(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#ctrl?.abort(reason);
  }
}
