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
  // Fields declared here (`declare`: no code emitted) and all set by the constructor, in this order: with the
  // tsconfig's ES2022 class fields, a plain declaration is emitted as a field defined undefined before the
  // constructor runs, so each of these was written twice per task (most of it before the JIT has optimised it).
  // The own properties and their order are what they were: every one of them, `schedule`, `triggerAt`, `group` too.
  declare readonly ref: QueueRef;
  declare readonly entry: StreamTask;
  declare readonly payload: unknown;
  declare readonly id: string;
  declare readonly type: string;
  declare readonly queue: string;
  declare readonly retried: number;
  declare readonly maxRetry: number;
  declare readonly timeoutMs: number;
  declare readonly enqueuedAt: number;
  declare readonly schedule?: string;
  declare readonly triggerAt?: number;
  declare readonly group?: string;
  /** Set when a shutdown gave the task back: its outcome is ignored. */
  declare abandoned: boolean;
  /** Set when its fleet-wide slot was freed and announced while its handler ran on (`Slots.recorded`): not again at its finish. */
  declare slotAnnounced: boolean;
  /** Its place in the slot table's runs in flight (`Slots`); -1 when not in them. */
  declare slotAt: number;
  /** When the task started (epoch ms). */
  declare readonly startedAt: number;
  #ctrl?: AbortController;
  #reason?: unknown;

  constructor(ref: QueueRef, entry: StreamTask, payload: unknown) {
    const m = entry.meta;
    this.ref = ref;
    this.entry = entry;
    this.payload = payload;
    this.id = entry.id;
    this.type = entry.type;
    this.queue = ref.name;
    this.retried = m[META.retried];
    this.maxRetry = m[META.maxRetry];
    this.timeoutMs = m[META.timeoutMs];
    this.enqueuedAt = m[META.enqueuedAt];
    this.schedule = m[META.schedule];
    this.triggerAt = m[META.triggerAt];
    this.group = m[META.group];
    this.abandoned = false;
    this.slotAnnounced = false;
    this.slotAt = -1;
    this.startedAt = engineTime.now();
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
