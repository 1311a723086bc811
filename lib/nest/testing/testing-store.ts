/**
 * The kit's in-memory queues (manual and inline modes): the live tasks of every queue, the dedup
 * keys and unique task ids, and the virtual clock. The same rules as enqueue.lua: a live dedup key
 * (within its TTL, whatever its task's state) returns its task's id (in the modes `debounce` and
 * `replace`, a task still waiting for its time is replaced instead: its id stays, debounce takes the
 * new due time, replace keeps the old one; else a new task is added); then a `taskId` that is live
 * (pending, scheduled or retrying) in the queue returns that id; a done or dead task frees its id.
 */
import { ChronosTestingError } from './testing-error.js';

/**
 * A task the kit holds (enqueued, not yet done or dead), with the fields a handler's `Task` has.
 * Instants are epoch ms of the kit's virtual clock.
 * @publicApi
 */
export interface EnqueuedTask<T = unknown> {
  /** The task id: the `taskId` option, a generated one, or `<schedule>:<trigger-unix>` for a trigger's task. */
  readonly id: string;
  /** The task type (a payload class's static `type` or name). */
  readonly type: string;
  /** The payload as the handler receives it: the JSON of what was enqueued, decoded (a payload class is restored by the handler). */
  readonly payload: T;
  /** The queue the task is in. */
  readonly queue: string;
  /** The options the task was enqueued with, after defaults: retries, timeout (ms), dedup. */
  readonly options: {
    /** Retries after a failure before the task is dead. */
    maxRetry: number;
    /** Timeout of one attempt, ms (0 = none). */
    timeout: number;
    /** The `taskId` option, when given (the id is then unique while the task is live). */
    taskId?: string;
    /** The `dedupKey` option, when given. */
    dedupKey?: string;
    /** Lifetime of the dedup key, ms (when `dedupKey` is given). */
    dedupTtl?: number;
    /** The dedup key's mode (`dedup.mode`), when not `first`. */
    dedupMode?: 'debounce' | 'replace';
  };
  /** Failed attempts so far (0 until the first failure). */
  readonly retried: number;
  /** When the task was first enqueued, epoch ms (virtual clock). */
  readonly enqueuedAt: number;
  /** When it is due: the enqueue instant, its `delay`/`processAt`, or its retry's time (epoch ms, virtual clock). */
  readonly runAt: number;
  /** For a trigger's task: the schedule that fired it. */
  readonly schedule?: string;
  /** For a trigger's task: the trigger instant, epoch ms. */
  readonly triggerAt?: number;
  /** The task's group (enqueue option `group`), when it has one. */
  readonly group?: string;
}

/** A task to add: everything but the bookkeeping. @internal */
export type NewTask = Omit<EnqueuedTask, 'retried'> & { retried?: number };

/** What an add did (as `EnqueueResult`, without the queue). @internal */
export interface AddResult {
  id: string;
  deduplicated: boolean;
  /** The dedup key's waiting task was replaced (modes debounce and replace). */
  replaced?: boolean;
  task?: EnqueuedTask;
}

/** @internal The kit's queues. */
export class TestingStore {
  private readonly live = new Map<string, EnqueuedTask[]>();
  private readonly dedup = new Map<string, { id: string; expiresAt: number }>();
  private seq = 0;
  private readonly order = new WeakMap<EnqueuedTask, number>();
  /** Tasks taken out of their queue whose attempt runs now (their unique id stays held). */
  readonly running = new Set<EnqueuedTask>();
  /** Every task ever added (deduplicated enqueues excluded), in order. */
  readonly history: EnqueuedTask[] = [];

  constructor(private clock: number) {}

  /** The virtual clock, epoch ms. */
  get now(): number {
    return this.clock;
  }

  /** Moves the virtual clock forward (never back). */
  advance(to: number): void {
    if (!Number.isFinite(to)) throw new ChronosTestingError(`advance: expected an instant (epoch ms), got ${String(to)}`);
    if (to > this.clock) this.clock = to;
  }

  /** Sets the virtual clock to an instant, earlier or later (fireDue: each trigger at its instant). */
  setClock(to: number): void {
    this.clock = to;
  }

  /**
   * Takes the dedup key `key` of `queue` for `ttlMs` unless it is live (SET NX, as fire.lua does for a
   * trigger before its overlap decision). @returns whether it was taken.
   */
  claim(queue: string, key: string, ttlMs: number): boolean {
    const dk = `${queue}\u0000${key}`;
    const d = this.dedup.get(dk);
    if (d && d.expiresAt > this.clock) return false;
    this.dedup.set(dk, { id: key, expiresAt: this.clock + ttlMs });
    return true;
  }

  /** Adds a task unless its dedup key or unique id is live; `claimed`: its dedup key was taken by {@link claim}, not checked again. */
  add(t: NewTask, claimed = false): AddResult {
    const { queue } = t;
    const dk = t.options.dedupKey === undefined || claimed ? undefined : `${queue}\u0000${t.options.dedupKey}`;
    const mode = t.options.dedupMode;
    const keyTtl = (runAt: number) => Math.max(t.options.dedupTtl ?? 3_600_000, mode ? runAt - this.clock : 0);
    if (dk !== undefined) {
      const d = this.dedup.get(dk);
      if (d && d.expiresAt > this.clock) {
        if (!mode) return { id: d.id, deduplicated: true };
        const waiting = this.live.get(queue)?.find((x) => x.id === d.id && x.runAt > this.clock && x.retried === 0);
        if (waiting) {
          // replaced in place, as enqueue.lua does: its id stays; debounce takes the new time
          const runAt = mode === 'debounce' ? t.runAt : waiting.runAt;
          const task: EnqueuedTask = { ...t, id: waiting.id, retried: 0, runAt };
          this.take(waiting);
          this.put(task);
          this.dedup.set(dk, { id: task.id, expiresAt: this.clock + keyTtl(runAt) });
          return { id: task.id, deduplicated: true, replaced: true };
        }
      }
    }
    if (t.options.taskId !== undefined && this.find(queue, t.id)) return { id: t.id, deduplicated: true };
    if (dk !== undefined) this.dedup.set(dk, { id: t.id, expiresAt: this.clock + keyTtl(t.runAt) });
    const task: EnqueuedTask = { ...t, retried: t.retried ?? 0 };
    this.put(task);
    this.history.push(task);
    return { id: task.id, deduplicated: false, task };
  }

  /** Puts a task (new, or back for a retry) in its queue. */
  put(task: EnqueuedTask): void {
    this.order.set(task, this.seq++);
    const list = this.live.get(task.queue) ?? [];
    list.push(task);
    this.live.set(task.queue, list);
  }

  /** Takes a task out of its queue (it runs, or it is done). @returns whether it was there. */
  take(task: EnqueuedTask): boolean {
    const list = this.live.get(task.queue);
    const i = list ? list.indexOf(task) : -1;
    if (i < 0) return false;
    list!.splice(i, 1);
    return true;
  }

  /** The live task of `queue` with this id. */
  find(queue: string, id: string): EnqueuedTask | undefined {
    const match = (t: EnqueuedTask) => t.queue === queue && t.id === id;
    return this.live.get(queue)?.find(match) ?? [...this.running].find(match);
  }

  /** Every live task, optionally of one queue, by due time then enqueue order. */
  tasks(queue?: string): EnqueuedTask[] {
    const all = queue === undefined ? [...this.live.values()].flat() : [...(this.live.get(queue) ?? [])];
    return all.sort((a, b) => a.runAt - b.runAt || this.order.get(a)! - this.order.get(b)!);
  }

  /** Empties every queue and forgets dedup keys and history (the clock stays). */
  clear(): void {
    this.live.clear();
    this.running.clear();
    this.dedup.clear();
    this.history.length = 0;
  }
}
