import type { EnqueueResult } from '../../core/queue/client.js';
import { fireDedupTtlMs, triggerKey } from '../../core/scheduler/definition.js';
import type { BackoffFn } from '../../core/queue/task.js';
import { resolveType, type PayloadClass } from '../payload-class.js';
import { runAttempt, type TaskOutcome } from './attempt.js';
import { asJson, mismatches, notEnqueuedMessage } from './match.js';
import type { TestingChronosClient } from './testing-client.js';
import { ChronosTestingError, closedError } from './testing-error.js';
import type { KitSchedule, TestingSchedulerService, TestingWorkerService } from './testing-roles.js';
import { KitOverlap } from './testing-overlap.js';
import { TestingStore, type EnqueuedTask, type NewTask } from './testing-store.js';
import { dueTriggers, manualTask, triggerTask } from './testing-triggers.js';
import {
  instant,
  type ChronosTestingMode,
  type DrainResult,
  type Instant,
  type PerformOptions,
  type TaskTypeRef,
} from './testing-types.js';

/** Most attempts one `drain` makes before it calls the queue a loop. */
const DRAIN_MAX_ATTEMPTS = 10_000;
/** Deepest chain of inline enqueues (a handler enqueuing a task whose handler enqueues …). */
const INLINE_MAX_DEPTH = 100;

/**
 * The testing kit's control of the queues and the clock, injectable in tests of a module that
 * imports `ChronosTestingModule.forRoot()`. In `manual` mode enqueues are recorded and nothing runs
 * until `perform` or `drain`; in `inline` mode each enqueue runs its task once before `enqueue()`
 * resolves. Time is virtual (epoch ms): it starts at the real time the module is created (or the
 * `now` option) and moves only by `advanceTo`, `fireDue` and retries in `drain`.
 * @publicApi
 */
export class ChronosTesting {
  /** @internal */
  readonly store: TestingStore;
  /** Every attempt's outcome since the module started (or `clear()`), in order. */
  readonly outcomes: TaskOutcome[] = [];
  /** Tasks that ended dead. */
  readonly dead: EnqueuedTask[] = [];
  private depth = 0;
  /** Set when inline enqueues nested too deep: every level's enqueue rethrows it up to the outer one, whatever `rethrow` says. */
  private runaway?: ChronosTestingError;
  private pending = new Set<Promise<unknown>>();
  /** The abort controller of each attempt running now. */
  private readonly attempts = new Map<EnqueuedTask, AbortController>();
  /** The schedules' overlap markers and buffered triggers (testing-overlap.ts). */
  private readonly overlap: KitOverlap;
  /** Set at the module's shutdown: every act throws from then on (the reads still answer). */
  private closed = false;

  /** @internal Created by the testing module. */
  constructor(
    /** The mode the module runs in. */
    readonly mode: ChronosTestingMode,
    private readonly client: TestingChronosClient,
    private readonly worker: TestingWorkerService,
    private readonly scheduler: TestingSchedulerService,
    private readonly backoff: BackoffFn,
    now: number,
    private readonly rethrow: boolean,
  ) {
    this.store = new TestingStore(now);
    this.overlap = new KitOverlap(this.store, this.attempts);
    client.attach({ now: () => this.store.now, accept: (tasks) => this.accept(tasks) });
    scheduler.triggerHook = (s) => this.triggerNow(s);
  }

  /** @internal Nest lifecycle: the module closed; `perform`, `drain`, `fireDue` and `advanceTo` throw from now on. */
  onApplicationShutdown(): void {
    this.closed = true;
  }

  /**
   * Mode 'redis' only: `redis://127.0.0.1:<port>` of the kit's private redis-server.
   * @throws ChronosTestingError in modes 'manual' and 'inline' (they talk to no Redis).
   */
  get redisUrl(): string {
    throw new ChronosTestingError(
      `ChronosTesting.redisUrl is for mode 'redis' (the kit's private redis-server); mode '${this.mode}' talks to no Redis`,
    );
  }

  /** The virtual clock, epoch ms. */
  get now(): number {
    return this.store.now;
  }

  /**
   * Tasks in the queues (enqueued, delayed or waiting for a retry; not those done or dead), by due
   * time. `type` filters by task type; `match` by a partial payload (compared as JSON) or a predicate.
   */
  enqueued<T = unknown>(type?: TaskTypeRef, match?: object | ((t: EnqueuedTask<T>) => boolean)): EnqueuedTask<T>[] {
    const t = type === undefined ? undefined : this.typeOf(type);
    const all = this.store.tasks().filter((x) => t === undefined || x.type === t) as EnqueuedTask<T>[];
    if (match === undefined) return all;
    if (typeof match === 'function') return all.filter(match as (t: EnqueuedTask<T>) => boolean);
    const expected = asJson(match);
    return all.filter((x) => mismatches(x.payload, expected).length === 0);
  }

  /** Every task enqueued since the module started (or `clear()`), done ones included, deduplicated enqueues excluded. */
  get history(): readonly EnqueuedTask[] {
    return this.store.history;
  }

  /**
   * Asserts that a task of `type` whose payload matches `payload` (partially, as JSON) is enqueued.
   * @returns the first such task.
   * @throws ChronosTestingError listing, for each task of that type, where its payload differs (or every enqueued task when none has the type).
   */
  expectEnqueued<T extends object>(type: PayloadClass<T> | string, payload?: Partial<T> | Record<string, unknown>): EnqueuedTask<T> {
    const name = this.typeOf(type);
    const expected = asJson(payload);
    const hit = this.store.tasks().find((t) => t.type === name && (expected === undefined || mismatches(t.payload, expected).length === 0));
    if (!hit) throw new ChronosTestingError(notEnqueuedMessage(name, expected, this.store.tasks()));
    return hit as EnqueuedTask<T>;
  }

  /**
   * Asserts that no task of `type` (whose payload matches `payload`, when given) is enqueued.
   * @throws ChronosTestingError naming the tasks that are.
   */
  expectNotEnqueued(type: TaskTypeRef, payload?: object): void {
    const found = this.enqueued(type, payload);
    if (found.length > 0)
      throw new ChronosTestingError(
        `Expected no task of type "${this.typeOf(type)}" to be enqueued, but ${found.length} is: ${found.map((t) => t.id).join(', ')}`,
      );
  }

  /**
   * Runs one attempt of a task with its real handler and the engine's `Task` shape.
   * Given an enqueued task (from {@link enqueued}): it leaves its queue; a retry puts it back (due at
   * `retryAt`), dead moves it to {@link dead}. Given a type (or payload class) and a payload: the
   * task is built as an enqueue would build it (same checks) and run once, outside the queues.
   * @returns the outcome (succeeded; retry with `retryAt`; dead with the reason) — a failure is not thrown.
   * @throws ChronosTestingError when the task is no longer in its queue, the type has no handler, or the module was closed.
   */
  perform<T = unknown>(task: EnqueuedTask<T>): Promise<TaskOutcome<T>>;
  perform<T extends object>(
    type: PayloadClass<T> | string,
    payload?: T | Record<string, unknown>,
    options?: PerformOptions,
  ): Promise<TaskOutcome<T>>;
  async perform(a: EnqueuedTask | TaskTypeRef, payload?: unknown, options: PerformOptions = {}): Promise<TaskOutcome> {
    if (this.closed) throw closedError('perform');
    if (typeof a === 'object' && a !== null) {
      if (!this.store.take(a))
        throw new ChronosTestingError(
          `perform: task ${a.id} (${a.type}) is not in its queue: it already ran, or it comes from another test`,
        );
      return this.run(a);
    }
    const type = this.typeOf(a);
    if (!this.worker.mux.get(type))
      throw new ChronosTestingError(
        `perform: no handler for task type "${type}" (handlers: ${this.worker.handledTypes.join(', ') || 'none'})`,
      );
    const { retried, schedule, triggerAt, ...enqueue } = options;
    const [t] = this.client.build([{ type: a, payload, options: enqueue }]);
    const task: EnqueuedTask = { ...t, retried: retried ?? 0, runAt: this.now };
    if (schedule !== undefined)
      Object.assign(task, { schedule, triggerAt: triggerAt === undefined ? this.now : instant(triggerAt, 'triggerAt') });
    return this.run(task, false);
  }

  /**
   * Runs every task of the queues (or of `queue`), including those their handlers enqueue and the
   * delayed ones, until none is left: one attempt at a time, the earliest due first; a retry is due
   * after the engine's backoff and the clock jumps to it (virtual time), so a task runs until it
   * succeeds or is dead. With `until` (an instant), only the tasks due at or before it run, and the
   * clock never passes it: `drain(undefined, { until: chronos.now })` runs what is due now and leaves
   * the rest queued (a task delayed past it, a retry whose backoff ends later).
   * @throws ChronosTestingError after `maxAttempts` attempts (a loop), naming the task types that ran most; for an `until` that is not an instant; when the module was closed.
   */
  async drain(queue?: string, options: { maxAttempts?: number; until?: Instant } = {}): Promise<DrainResult> {
    if (this.closed) throw closedError('drain');
    const max = options.maxAttempts ?? DRAIN_MAX_ATTEMPTS;
    const until = options.until === undefined ? Infinity : instant(options.until, 'until');
    const result: DrainResult = { succeeded: 0, retried: 0, dead: 0, outcomes: [] };
    const counts = new Map<string, number>();
    for (;;) {
      const next = this.store.tasks(queue)[0];
      if (!next || next.runAt > until) return result;
      if (result.outcomes.length >= max) {
        const top = [...counts]
          .sort((x, y) => y[1] - x[1])
          .slice(0, 3)
          .map(([t, n]) => `${t} ×${n}`);
        throw new ChronosTestingError(
          `drain: the queue${queue ? ` "${queue}"` : 's'} did not empty after ${max} attempts (${this.store.tasks(queue).length} task(s) left; ran most: ${top.join(', ')}). ` +
            'A handler that enqueues a new task each time it runs (or a cycle of handlers) never ends: give it a taskId or dedupKey, or raise maxAttempts.',
        );
      }
      this.store.advance(next.runAt);
      this.store.take(next);
      const o = await this.run(next);
      counts.set(next.type, (counts.get(next.type) ?? 0) + 1);
      result.outcomes.push(o);
      if (o.outcome === 'succeeded') result.succeeded++;
      else if (o.outcome === 'retry') result.retried++;
      else if (o.outcome === 'dead') result.dead++;
    }
  }

  /**
   * Enqueues every trigger of every schedule (declared or added, not paused) in [from, to], each
   * computed by the engine's spec (cron in its zone with DST, `@every`), with the engine's task id
   * and dedup key `<schedule>:<trigger-unix>` and `triggerAt`, in trigger order; a trigger already
   * fired (its dedup key alive: enqueued, or skipped or buffered by the overlap policy) is not enqueued again. While the task of the schedule's last trigger
   * is still queued, running or waiting for a retry (it holds the engine's overlap marker; an
   * operator's `triggerNow` task holds none), its overlap policy applies: `skip` skips the trigger;
   * `buffer-one` keeps it (it is enqueued when the task it waits behind leaves the queues:
   * succeeded, dead or superseded) and skips
   * further ones; `cancel-previous` takes the schedule's queued tasks out (they never start) and
   * aborts the signal of its running ones with a `TaskSupersededError`, then enqueues it. The clock is set to each trigger's instant as
   * it is enqueued (earlier or later than now: a test may fire any past or future window), then to
   * `to`. In inline mode each trigger's task runs at its instant.
   * @returns the tasks enqueued.
   * @throws ChronosTestingError for a reversed range, more than 10 000 triggers of one schedule, or when the module was closed.
   */
  async fireDue(from: Instant, to: Instant): Promise<EnqueuedTask[]> {
    if (this.closed) throw closedError('fireDue');
    const f = instant(from, 'from');
    const t = instant(to, 'to');
    if (t < f)
      throw new ChronosTestingError(`fireDue: expected from <= to, got ${new Date(f).toISOString()} > ${new Date(t).toISOString()}`);
    const due = dueTriggers(this.scheduler.schedules.values(), f, t);
    const added: EnqueuedTask[] = [];
    for (const { s, at } of due) {
      this.store.setClock(at);
      const st = s.stored;
      // maxRuns as the engine counts it: triggers enqueued or buffered, afresh when maxRuns changed
      if (s.runsUnder !== st.maxRuns) [s.runs, s.runsUnder] = [0, st.maxRuns];
      if (st.maxRuns !== undefined && (s.runs ?? 0) >= st.maxRuns) continue;
      const id = triggerKey(st.name, at);
      const dedupTtl = fireDedupTtlMs(st, s.spec);
      // fire.lua takes the trigger's dedup key before the overlap decision: a trigger fired before
      // (enqueued, skipped or buffered) is a duplicate, never enqueued again
      if (!this.store.claim(st.queue, id, dedupTtl)) continue;
      const task = triggerTask(st, id, at, dedupTtl);
      const admission = this.overlap.admit(st, id, task); // takes the marker before the task can run (inline: within accept)
      if (admission === 'buffered') s.runs = (s.runs ?? 0) + 1;
      if (admission !== 'enqueue') continue;
      await this.accept([task], true);
      added.push(this.store.history[this.store.history.length - 1]);
      s.runs = (s.runs ?? 0) + 1;
    }
    this.store.setClock(t);
    return added;
  }

  /**
   * Fires every trigger in (now, instant] ({@link fireDue}) and moves the clock there.
   * @returns the tasks enqueued (none when `to` is the clock's instant).
   * @throws ChronosTestingError when `to` is before the clock (the clock never goes back here; `fireDue(from, to)` fires a past window), or when the module was closed.
   */
  async advanceTo(to: Instant): Promise<EnqueuedTask[]> {
    if (this.closed) throw closedError('advanceTo');
    const t = instant(to, 'to');
    if (t < this.now)
      throw new ChronosTestingError(
        `advanceTo: expected an instant at or after the virtual clock (${new Date(this.now).toISOString()}), got ${new Date(t).toISOString()}: ` +
          'the clock does not go back; fireDue(from, to) fires the triggers of a past window',
      );
    if (t === this.now) return [];
    return this.fireDue(this.now + 1, t);
  }

  /** Resolves when no attempt runs (inline mode: every enqueue's attempt has settled). */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the same signature as in redis mode
  async waitForIdle(options: { timeout?: number } = {}): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Empties the queues, the dead tasks, the outcomes, the history and the dedup keys (the clock and the schedules stay). */
  clear(): void {
    this.store.clear();
    this.overlap.clear();
    this.outcomes.length = 0;
    this.dead.length = 0;
  }

  /** Where a deduplicating task is, as enqueue.lua tells it: waiting (scheduled, retry), dead, else pending (ready, running or done). */
  private stateOf(queue: string, id: string): EnqueueResult['state'] {
    const live = this.store.find(queue, id);
    if (live && live.runAt > this.now) return live.retried > 0 ? 'retry' : 'scheduled';
    if (!live && this.dead.some((d) => d.queue === queue && d.id === id)) return 'dead';
    return 'pending';
  }

  /** The client's sink: records the tasks; inline, runs each new one now. `claimed`: a trigger's tasks, whose dedup key fireDue took. */
  private async accept(tasks: NewTask[], claimed = false): Promise<EnqueueResult[]> {
    const results: EnqueueResult[] = [];
    const added: EnqueuedTask[] = [];
    for (const t of tasks) {
      const r = this.store.add(t, claimed);
      const state =
        r.deduplicated && !r.replaced ? this.stateOf(t.queue, r.id) : r.replaced || t.runAt > this.now ? 'scheduled' : 'pending';
      results.push({ id: r.id, queue: t.queue, deduplicated: r.deduplicated, ...(r.replaced ? { replaced: true } : {}), state });
      if (r.task) added.push(r.task);
    }
    if (this.mode === 'inline') {
      for (const task of added) {
        if (this.depth >= INLINE_MAX_DEPTH) {
          this.runaway ??= new ChronosTestingError(
            `inline: enqueues nested ${INLINE_MAX_DEPTH} deep (last: ${task.type}): a handler that enqueues its own type each time never ends`,
          );
          throw this.runaway;
        }
        this.store.take(task);
        this.depth++;
        let o: TaskOutcome;
        try {
          o = await this.run(task);
        } finally {
          this.depth--;
        }
        // the nested enqueue's throw failed a handler (an outcome, not an error of its enqueue): pass it up to the test
        const runaway = this.runaway;
        if (runaway) {
          if (this.depth === 0) this.runaway = undefined;
          throw runaway;
        }
        if (this.rethrow && o.outcome !== 'succeeded') throw o.error;
      }
    }
    return results;
  }

  /** One attempt of a task taken out of its queue; `requeue` applies the outcome to the queues. */
  private async run(task: EnqueuedTask, requeue = true): Promise<TaskOutcome> {
    this.store.running.add(task);
    this.worker.activeCount++;
    const ctrl = new AbortController();
    this.attempts.set(task, ctrl);
    const p = runAttempt(task, this.worker.mux, this.backoff, this.now, ctrl);
    this.pending.add(p);
    let o: TaskOutcome;
    try {
      o = await p;
    } finally {
      this.pending.delete(p);
      this.attempts.delete(task);
      this.store.running.delete(task);
      this.worker.activeCount--;
    }
    this.outcomes.push(o);
    if (requeue && o.outcome === 'retry') this.store.put({ ...task, retried: task.retried + 1, runAt: o.retryAt });
    if (o.outcome === 'dead') this.dead.push(task);
    if (requeue && o.outcome !== 'retry') {
      // the task held its schedule's overlap marker: under buffer-one the trigger waiting behind it is enqueued now
      const waiting = this.overlap.released(task);
      if (waiting) await this.accept([{ ...waiting, runAt: this.now }], true);
    }
    return o;
  }

  private async triggerNow(s: KitSchedule): Promise<string> {
    const task = manualTask(s.stored, this.now);
    await this.accept([task]);
    return task.id;
  }

  private typeOf(type: TaskTypeRef): string {
    const t = resolveType(type);
    if (!t) throw new ChronosTestingError(`expected a task type (string) or a payload class, got ${String(type)}`);
    return t;
  }
}
