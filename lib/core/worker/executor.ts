import { TaskTimeoutError } from '../runtime/errors.js';
import type { ChronosEvent, EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { consumerSpanWanted, startConsumerSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import { META, type DeadReason } from '../redis/protocol.js';
import type { RedisClient } from '../redis/types.js';
import type { AckBatcher } from './ack-batcher.js';
import type { TaskCounters } from './heartbeat.js';
import { markerKeys, type StreamTask } from '../queue/codec.js';
import type { Registration } from './mux.js';
import type { BackoffFn } from '../queue/task.js';
import { engineTime } from '../runtime/time.js';
import { errorMessage } from './error-text.js';
import { FailurePaths, taskRef } from './failure-paths.js';

import type { TaskRun, QueueRef } from './task-run.js';

export { errorMessage } from './error-text.js';

/** Options the executor applies to outcomes. */
export interface ExecutorOptions {
  backoff: BackoffFn;
  deadMaxCount: number;
  deadMaxAge: number;
}

/**
 * Timeouts up to this long get their own timer; longer ones (the default is 30 min) are checked
 * by one sweep a second, which saves a timer per task: they expire within a second of their time.
 */
const OWN_TIMER_MAX_MS = 5_000;

/** No markers to release (most tasks): one shared empty list, never written to. */
const NO_MARKERS: readonly string[] = Object.freeze([]);

/** Told when a run's outcome is recorded (or the run was abandoned): the slot table, one object for every run (no closure per task). */
export interface RunOwner {
  finish(run: TaskRun): void;
  /**
   * The run's outcome is recorded while its handler runs on (it went on after its timeout's or a
   * cancel's abort): the fleet-wide slot its entry held is free now (retried, dead), its server slot
   * only at {@link finish}, when the handler returns.
   */
  recorded(run: TaskRun): void;
}

/** One attempt being run: what settling it needs (one object per task instead of closures). */
interface Attempt {
  readonly run: TaskRun;
  readonly reg: Registration;
  readonly owner: RunOwner;
  readonly span: ChronosSpan | undefined;
  settled: boolean;
  /** The handler has not returned yet (a timed-out one may run on: it keeps its slot until it returns). */
  running: boolean;
  /** The outcome is recorded; the slot is freed when the handler has returned too. */
  recorded: boolean;
  /** The attempt's own timeout timer (timeouts up to OWN_TIMER_MAX_MS). */
  timer?: NodeJS.Timeout;
  /** When a long timeout expires, epoch ms (checked by the sweep); 0 = none. */
  dueAt: number;
  /** Its place in the executor's list of long timeouts; -1 when not in it. */
  longAt: number;
}

/** The attempt's span (tracing wanted, see `consumerSpanWanted`); apart from `execute`, which runs for every task. */
function spanOf(run: TaskRun): ChronosSpan | undefined {
  const { entry: task, ref: queue } = run;
  const m = task.meta;
  return startConsumerSpan({
    queue: queue.name,
    taskId: task.id,
    taskType: task.type,
    retried: m[META.retried],
    reclaimed: m[META.crashes],
    schedule: m[META.schedule],
    triggerAt: m[META.triggerAt],
    traceparent: m[META.traceparent],
  });
}

/** What an {@link Executor} is built with. */
export interface ExecutorParts {
  readonly client: RedisClient;
  readonly logger: ChronosLogger;
  readonly events: EventBus;
  /** Where successes go (batched acks). */
  readonly acker: AckBatcher;
  readonly opts: ExecutorOptions;
  /** The server's counters: the executor counts failed attempts. */
  readonly counters: TaskCounters;
  /** Told when a retry of `queue` is due `delayMs` from now (at `retryAt`, Redis time, epoch ms): it indexes it and is awake by then. */
  readonly forwarder: { forwardBy(delayMs: number, queue: QueueRef, retryAt: number): void };
}

/**
 * Runs handlers and records their outcome: success → batched ack; failure → retry set with
 * backoff, or dead when the budget is spent or the error is a `NonRetryableError` (its
 * {@link FailurePaths}); a timeout aborts the signal and counts as a failure. Outcomes of runs abandoned by a shutdown are ignored
 * (their tasks were put back in the queue).
 */
export class Executor {
  /**
   * Attempts with a long timeout (see OWN_TIMER_MAX_MS), checked by the sweep; each knows its place
   * (`longAt`), so leaving is a swap with the last one. Not a Set: most tasks pass through it (the
   * default timeout is long), and a Set's add and delete reallocate its table as it fills and empties
   * (about 130 bytes per task at c=50).
   */
  private readonly long: Attempt[] = [];
  private sweeper?: NodeJS.Timeout;
  private readonly logger: ChronosLogger;
  private readonly events: EventBus;
  private readonly acker: AckBatcher;
  /** Where failures go: retry or dead. */
  private readonly failures: FailurePaths;

  constructor(p: ExecutorParts) {
    ({ logger: this.logger, events: this.events, acker: this.acker } = p);
    this.failures = new FailurePaths(p);
    // the optional tracing API is loaded now (a synchronous require of some 10-25 ms), not in the middle of the first fetched batch
    tracingAvailable();
  }

  /**
   * Runs the handler; calls `owner.finish(run)` once the outcome is recorded (or the run was abandoned)
   * and the handler has returned: a handler that ignores its timeout's abort keeps its slot until it
   * returns (as a cancelled one does), so no more than `concurrency` handlers ever run.
   * Synchronous handlers settle without a promise; no promise race per task: the timeout timer
   * (or the sweep, for long timeouts) settles the run itself. The attempt's state ({@link Attempt})
   * and its timeout are made only when the handler returns a promise (or throws, or ends otherwise
   * than by a plain success): while a handler runs synchronously no timer or sweep can run, so a
   * synchronous success needs neither, and an asynchronous handler's timeout still counts from its start.
   */
  execute(run: TaskRun, reg: Registration, owner: RunOwner): void {
    if (this.events.active) this.emitStarted(run);
    const span = consumerSpanWanted(run.entry.meta[META.traceparent]) ? spanOf(run) : undefined;
    let result: PromiseLike<unknown> | undefined;
    try {
      // with a span, the handler runs in its context, so the spans it makes are its children
      result = (span ? span.run(() => reg.fn(run)) : reg.fn(run)) as PromiseLike<unknown> | undefined;
    } catch (err) {
      return this.ended(this.attempt(run, reg, owner, span), false, err);
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      const a = this.attempt(run, reg, owner, span);
      this.arm(a);
      result.then(
        () => this.ended(a, true),
        (err: unknown) => this.ended(a, false, err),
      );
      // the usual end of a synchronous handler (a success, no span, nothing aborted): acked, its slot free
    } else if (span === undefined && !run.abandoned && !run.aborted) {
      this.acked(run, true);
      owner.finish(run);
    } else this.ended(this.attempt(run, reg, owner, span), true);
  }

  /** The state of an attempt whose end is not a synchronous plain success. */
  private attempt(run: TaskRun, reg: Registration, owner: RunOwner, span: ChronosSpan | undefined): Attempt {
    return { run, reg, owner, span, settled: false, running: true, recorded: false, timer: undefined, dueAt: 0, longAt: -1 };
  }

  /** Starts the timeout of an attempt whose handler returned a promise: due `timeoutMs` after the run started. */
  private arm(a: Attempt): void {
    const { timeoutMs, startedAt } = a.run;
    if (timeoutMs <= 0) return;
    if (timeoutMs <= OWN_TIMER_MAX_MS) {
      // what is left of it once the handler's synchronous part has run
      const left = Math.max(0, startedAt + timeoutMs - engineTime.now());
      a.timer = setTimeout(() => this.expire(a), left);
    } else {
      a.dueAt = startedAt + timeoutMs;
      a.longAt = this.long.length;
      this.long.push(a);
      this.sweeper ??= setInterval(() => this.sweep(), 1000).unref();
    }
  }

  /**
   * The handler returned (resolved or threw). Its outcome is recorded now, unless its timeout did it
   * already: then its slot, kept while it ran on, is free once that record is written. Only its first
   * end counts: a non-compliant thenable may call its callbacks twice, or call one and then throw, and
   * each later call freed the slot again (a server of concurrency 1 ran two handlers at once: trial 33).
   */
  private ended(a: Attempt, ok: boolean, err?: unknown): void {
    if (!a.running) return;
    a.running = false;
    if (!a.settled) return this.settle(a, ok, err);
    if (!a.run.abandoned) {
      this.logger.debug?.(
        `A timed-out task's handler returned; its slot is free, its outcome ignored (the timeout was recorded) (${taskRef(a.run.entry, a.run.ref)})`,
      );
    }
    if (a.recorded) a.owner.finish(a.run);
  }

  /** The outcome is recorded (or the run was abandoned): the slot is free, once the handler has returned. */
  private done(a: Attempt): void {
    a.recorded = true;
    if (!a.running) a.owner.finish(a.run);
    else if (!a.run.abandoned) a.owner.recorded(a.run);
  }

  /** An attempt's timeout elapsed: its signal aborts and it fails with a TaskTimeoutError. */
  private expire(a: Attempt): void {
    const err = new TaskTimeoutError(a.run.id, a.run.timeoutMs);
    a.run.abort(err);
    this.settle(a, false, err);
  }

  /** Records an attempt's outcome, once (the handler's end or its timeout, whichever comes first). */
  private settle(a: Attempt, ok: boolean, err?: unknown): void {
    if (a.settled) return;
    a.settled = true;
    const run = a.run;
    if (a.timer) clearTimeout(a.timer);
    else if (a.longAt >= 0) this.dropLong(a);
    // the usual end (a success, no span, nothing aborted) apart from the others: a small function
    // that the JIT compiles (and inlines) sooner; it runs for every task, mostly before it is optimised
    if (ok && a.span === undefined && !run.abandoned && !run.aborted) return this.succeeded(a, true);
    this.settleOther(a, ok, err);
  }

  /** {@link settle} of every other end: with a span, abandoned, cancelled, superseded, failed. */
  private settleOther(a: Attempt, ok: boolean, err: unknown): void {
    const { run, span } = a;
    if (span) {
      if (run.abandoned) span.set({ 'chronos.task.abandoned': true });
      span.end(ok || run.abandoned ? undefined : err);
    }
    if (run.abandoned) return this.done(a);
    if (run.cancelled) {
      // expected: the Inspector dead-lettered it before aborting its signal; there is nothing to record
      const outcome = ok ? 'succeeded' : `failed: ${errorMessage(err)}`;
      this.logger.debug?.(
        `Cancelled task ended; its outcome is not recorded, it is dead already (${taskRef(run.entry, run.ref)} outcome=${outcome})`,
      );
      return this.done(a);
    }
    // a superseded run (overlap cancel-previous) leaves the queue like a success, whatever its outcome: never retried
    if (ok || run.superseded) {
      if (!ok) this.logger.debug?.(`Superseded task ended; acked, not retried (${taskRef(run.entry, run.ref)} error=${errorMessage(err)})`);
      return this.succeeded(a, ok);
    }
    this.failures
      .fail(run, err, a.reg.options.backoff)
      .catch((e: unknown) => {
        // never an unhandled rejection (it would end the process): the entry stays pending and is reclaimed
        this.logger.error(`Could not record a failure; the task stays pending and will be reclaimed (${taskRef(run.entry, run.ref)})`, e);
      })
      .finally(() => this.done(a));
  }

  /** The attempt leaves the queue: its ack is batched (its markers released with it); `ok`: it succeeded (else it was superseded). */
  private succeeded(a: Attempt, ok: boolean): void {
    this.acked(a.run, ok);
    this.done(a);
  }

  /** Batches the ack of `run` (its markers released with it) and emits `task.succeeded` when `ok`. */
  private acked(run: TaskRun, ok: boolean): void {
    const { entry: task, ref: queue } = run;
    const m = task.meta;
    const release = m[META.uniqueId] || m[META.overlapSkip] || m[META.group] ? markerKeys(queue.keys, task) : NO_MARKERS;
    this.acker.add(queue.keys, task.entryId, task.id, release);
    if (ok && this.events.active) {
      const durationMs = engineTime.now() - run.startedAt;
      this.events.emit({
        type: 'task.succeeded',
        queue: queue.name,
        taskId: task.id,
        taskType: task.type,
        retried: run.retried,
        durationMs,
      });
    }
  }

  private emitStarted(run: TaskRun): void {
    const { entry: task, ref: queue } = run;
    const m = task.meta;
    const e: Extract<ChronosEvent, { type: 'task.started' }> = {
      type: 'task.started',
      queue: queue.name,
      taskId: task.id,
      taskType: task.type,
      retried: run.retried,
      enqueuedAt: m[META.enqueuedAt],
      readyAt: Number(task.entryId.slice(0, task.entryId.indexOf('-'))),
    };
    if (m[META.schedule] !== undefined) e.schedule = m[META.schedule];
    if (m[META.triggerAt] !== undefined) e.triggerAt = m[META.triggerAt];
    if (m[META.crashes]) e.reclaimed = m[META.crashes];
    this.events.emit(e);
  }

  /** Takes `a` out of the list of long timeouts: the last one takes its place. */
  private dropLong(a: Attempt): void {
    const long = this.long;
    const last = long.pop()!;
    if (last !== a) {
      long[a.longAt] = last;
      last.longAt = a.longAt;
    }
    a.longAt = -1;
  }

  /** Expires the long timeouts that are due (found first: an expiry changes the list). */
  private sweep(): void {
    const now = engineTime.now();
    let due: Attempt[] | undefined;
    for (const a of this.long) if (a.dueAt <= now) (due ??= []).push(a);
    if (due) for (const a of due) if (a.longAt >= 0) this.expire(a);
  }

  /** Stops the timeout sweep (the server is stopped). */
  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** A task of a type this server has no handler for: bounced, then dead (see {@link FailurePaths.noHandler}). */
  noHandler(run: TaskRun, registered: string[]): Promise<void> {
    return this.failures.noHandler(run, registered);
  }

  /** The dead path, for every reason (see {@link FailurePaths.kill}). @returns true when the task was moved. */
  kill(queue: QueueRef, task: StreamTask, reason: DeadReason, error: string, quiet = false, run?: TaskRun): Promise<boolean> {
    return this.failures.kill(queue, task, reason, error, quiet, run);
  }
}
