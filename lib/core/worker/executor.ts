import { DEFAULTS } from '../runtime/defaults.js';
import { HandlerNotFoundError, TaskTimeoutError } from '../runtime/errors.js';
import type { ChronosEvent, EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { consumerSpanWanted, startConsumerSpan, tracingAvailable, type ChronosSpan } from '../observability/tracing.js';
import { killScript, retryScript } from '../redis/commands/queue.js';
import { DEAD_REASON, META, type DeadReason } from '../redis/protocol.js';
import { wasReclaimed } from '../redis/commands/recovery.js';
import type { RedisClient } from '../redis/types.js';
import type { AckBatcher } from './ack-batcher.js';
import type { TaskCounters } from './heartbeat.js';
import { encodeStored, markerKeys, type StreamTask, type TaskMeta } from '../queue/codec.js';
import type { Registration } from './mux.js';
import { checkedBackoffDelay, defaultBackoff, type BackoffFn } from '../queue/task.js';
import { engineTime } from '../runtime/time.js';
import { errorMessage, errorText, isNonRetryable, isTimeout } from './error-text.js';

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

/** How many times a task of an unknown type bounces (short backoff) before it is dead. */
const NO_HANDLER_BOUNCES = 3;

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
 * backoff, or dead when the budget is spent or the error is a `NonRetryableError`; a timeout
 * aborts the signal and counts as a failure. Outcomes of runs abandoned by a shutdown are ignored
 * (their tasks were put back in the queue).
 */
export class Executor {
  /** Attempts with a long timeout (see OWN_TIMER_MAX_MS), checked by the sweep. */
  private readonly long = new Set<Attempt>();
  private sweeper?: NodeJS.Timeout;
  private readonly client: RedisClient;
  private readonly logger: ChronosLogger;
  private readonly events: EventBus;
  private readonly acker: AckBatcher;
  private readonly opts: ExecutorOptions;
  private readonly counters: TaskCounters;
  private readonly forwarder: ExecutorParts['forwarder'];

  constructor(p: ExecutorParts) {
    ({ client: this.client, logger: this.logger, events: this.events, acker: this.acker } = p);
    ({ opts: this.opts, counters: this.counters, forwarder: this.forwarder } = p);
    // the optional tracing API is loaded now (a synchronous require of some 10-25 ms), not in the middle of the first fetched batch
    tracingAvailable();
  }

  /**
   * Runs the handler; calls `owner.finish(run)` once the outcome is recorded (or the run was abandoned)
   * and the handler has returned: a handler that ignores its timeout's abort keeps its slot until it
   * returns (as a cancelled one does), so no more than `concurrency` handlers ever run.
   * Synchronous handlers settle without a promise; no promise race per task: the timeout timer
   * (or the sweep, for long timeouts) settles the run itself.
   */
  execute(run: TaskRun, reg: Registration, owner: RunOwner): void {
    const { entry: task, ref: queue } = run;
    if (this.events.active) this.emitStarted(run);
    const m = task.meta;
    const span = consumerSpanWanted(m[META.traceparent])
      ? startConsumerSpan({
          queue: queue.name,
          taskId: task.id,
          taskType: task.type,
          retried: m[META.retried],
          reclaimed: m[META.crashes],
          schedule: m[META.schedule],
          triggerAt: m[META.triggerAt],
          traceparent: m[META.traceparent],
        })
      : undefined;
    const a: Attempt = { run, reg, owner, span, settled: false, running: true, recorded: false, timer: undefined, dueAt: 0 };
    const timeoutMs = run.timeoutMs;
    if (timeoutMs > 0) {
      if (timeoutMs <= OWN_TIMER_MAX_MS) a.timer = setTimeout(() => this.expire(a), timeoutMs);
      else {
        a.dueAt = run.startedAt + timeoutMs;
        this.long.add(a);
        this.sweeper ??= setInterval(() => this.sweep(), 1000).unref();
      }
    }
    try {
      // with a span, the handler runs in its context, so the spans it makes are its children
      const result = (span ? span.run(() => reg.fn(run)) : reg.fn(run)) as PromiseLike<unknown> | undefined;
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
        result.then(
          () => this.ended(a, true),
          (err: unknown) => this.ended(a, false, err),
        );
      } else this.ended(a, true);
    } catch (err) {
      this.ended(a, false, err);
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
    const { run, span } = a;
    if (a.timer) clearTimeout(a.timer);
    else if (a.dueAt !== 0) this.long.delete(a);
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
      const { entry: task, ref: queue } = run;
      const m = task.meta;
      const release = m[META.uniqueId] || m[META.overlapSkip] || m[META.group] ? markerKeys(queue.keys, task) : NO_MARKERS;
      this.acker.add(queue.keys, task.entryId, task.id, release);
      if (!ok) this.logger.debug?.(`Superseded task ended; acked, not retried (${taskRef(task, queue)} error=${errorMessage(err)})`);
      else if (this.events.active) {
        const durationMs = engineTime.now() - run.startedAt;
        const retried = run.retried;
        this.events.emit({ type: 'task.succeeded', queue: queue.name, taskId: task.id, taskType: task.type, retried, durationMs });
      }
      return this.done(a);
    }
    this.fail(run, err, a.reg.options.backoff)
      .catch((e: unknown) => {
        // never an unhandled rejection (it would end the process): the entry stays pending and is reclaimed
        this.logger.error(`Could not record a failure; the task stays pending and will be reclaimed (${taskRef(run.entry, run.ref)})`, e);
      })
      .finally(() => this.done(a));
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

  /** Expires the long timeouts that are due. */
  private sweep(): void {
    const now = engineTime.now();
    for (const a of this.long) if (a.dueAt <= now) this.expire(a);
  }

  /** Stops the timeout sweep (the server is stopped). */
  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * A task of a type this server has no handler for: a few short bounces (another server may have it),
   * then dead. Each bounce and the dead end count as a failed attempt (the counters, `task.failed`), as
   * the queue's daily `failed` counts them (retry.lua, kill.lua) and as a handler's failure is counted.
   */
  async noHandler(run: TaskRun, registered: string[]): Promise<void> {
    const { entry: task, ref: queue } = run;
    this.counters.failed++;
    const error = new HandlerNotFoundError(task.type, task.entryId);
    const meta: TaskMeta = { ...task.meta, [META.lastError]: error.message, [META.failedAt]: engineTime.now() };
    const retried = run.retried;
    if (this.events.active) {
      this.events.emit({
        type: 'task.failed',
        queue: queue.name,
        taskId: task.id,
        taskType: task.type,
        retried,
        error: error.message,
        durationMs: 0,
      });
    }
    if (retried >= Math.min(run.maxRetry, NO_HANDLER_BOUNCES)) {
      this.logger.error(`Task dead: ${error.message} (id=${task.id} queue=${queue.name} registered=${registered.join(',') || 'none'})`);
      const reason = DEAD_REASON.noHandler;
      await this.kill(queue, { ...task, meta: { ...meta, [META.deadReason]: reason } }, reason, error.message);
      return;
    }
    await this.retryLater(run, { ...meta, [META.retried]: retried + 1 }, 1000 * 2 ** retried, error);
  }

  private async fail(run: TaskRun, err: unknown, backoff: BackoffFn | undefined): Promise<void> {
    const { entry: task, ref: queue } = run;
    const retried = run.retried;
    this.counters.failed++;
    if (this.events.active) {
      const durationMs = engineTime.now() - run.startedAt;
      const error = errorMessage(err);
      this.events.emit({ type: 'task.failed', queue: queue.name, taskId: task.id, taskType: task.type, retried, error, durationMs });
    }
    const meta: TaskMeta = { ...task.meta, [META.lastError]: errorText(err), [META.failedAt]: engineTime.now() };
    if (isNonRetryable(err) || retried >= run.maxRetry) {
      const reason: DeadReason = isNonRetryable(err)
        ? DEAD_REASON.nonRetryable
        : isTimeout(err)
          ? DEAD_REASON.timeout
          : DEAD_REASON.retries;
      this.logger.error(
        `Task dead (type=${task.type} id=${task.id} queue=${queue.name} retried=${retried}/${run.maxRetry} reason=${reason} ` +
          `error=${errorMessage(err)})`,
      );
      await this.kill(queue, { ...task, meta: { ...meta, [META.deadReason]: reason } }, reason, errorMessage(err), false, run);
      return;
    }
    let delay: number;
    try {
      delay = checkedBackoffDelay((backoff ?? this.opts.backoff)(retried, err, run), engineTime.now());
    } catch (e) {
      this.logger.warn(`Backoff function failed; using the default (type=${task.type} error=${errorMessage(e)})`);
      delay = defaultBackoff(retried, err, run);
    }
    await this.retryLater(run, { ...meta, [META.retried]: retried + 1 }, Math.round(delay), err);
  }

  private async retryLater(run: TaskRun, meta: TaskMeta, delay: number, err: unknown): Promise<void> {
    const { entry: task, ref: queue } = run;
    try {
      const retryAt = await retryScript(this.client, queue.keys, {
        entryId: task.entryId,
        taskId: task.id,
        stored: encodeStored({ ...task, meta }),
        delayMs: delay,
        markers: markerKeys(queue.keys, task),
        counterTtlMs: DEFAULTS.counterTtlMs,
      });
      if (retryAt === undefined) {
        await this.notPending('Failure not recorded', queue, task, run);
        return;
      }
      this.forwarder.forwardBy(delay, queue, retryAt);
      const retried = meta[META.retried];
      this.logger.warn(
        `Retry scheduled (type=${task.type} id=${task.id} queue=${queue.name} retried=${retried}/${meta[META.maxRetry]} delayMs=${delay} ` +
          `error=${errorMessage(err)})`,
      );
      if (this.events.active) {
        this.events.emit({ type: 'task.retried', queue: queue.name, taskId: task.id, taskType: task.type, retried, retryAt });
      }
    } catch (e) {
      this.logger.error(`Could not schedule a retry; the task stays pending and will be reclaimed (id=${task.id})`, e);
    }
  }

  /**
   * The dead path, for every reason (kill.lua: ack, dead-letter, release the markers, trim).
   * `run`: the run whose outcome this is, if any (a run cancelled meanwhile is expected to be gone).
   * @returns true when the task was moved; false when its entry was no longer pending (a warning
   * says why, unless `quiet`) or Redis failed (logged: the entry stays pending and is reclaimed).
   */
  async kill(queue: QueueRef, task: StreamTask, reason: DeadReason, error: string, quiet = false, run?: TaskRun): Promise<boolean> {
    try {
      const failedAt = await killScript(this.client, queue.keys, {
        entryId: task.entryId,
        taskId: task.id,
        stored: encodeStored(task),
        release: markerKeys(queue.keys, task),
        maxDead: this.opts.deadMaxCount,
        maxDeadAgeMs: this.opts.deadMaxAge,
        counterTtlMs: DEFAULTS.counterTtlMs,
      });
      if (failedAt === undefined) {
        if (!quiet) await this.notPending('Not moved to dead', queue, task, run);
        return false;
      }
      if (this.events.active) {
        const retried = task.meta[META.retried];
        this.events.emit({ type: 'task.dead', queue: queue.name, taskId: task.id, taskType: task.type, retried, reason, error });
      }
      return true;
    } catch (e) {
      this.logger.error(`Could not move a task to dead; it stays pending and will be reclaimed (${taskRef(task, queue)})`, e);
      return false;
    }
  }

  /**
   * An outcome found its entry no longer pending. Expected when an operator cancelled the run while
   * its outcome was being written (the Inspector dead-lettered it): logged as such, at debug level.
   * Otherwise a warning says why (reclaimed, or gone).
   */
  private async notPending(what: string, queue: QueueRef, task: StreamTask, run: TaskRun | undefined): Promise<void> {
    if (run?.cancelled) {
      this.logger.debug?.(`${what}: the task was cancelled by an operator, it is dead already (${taskRef(task, queue)})`);
      return;
    }
    this.logger.warn(`${what}: the task ${await this.whyNotPending(queue, task.entryId)} (${taskRef(task, queue)})`);
  }

  /** Why an entry this server ran is no longer pending for the group: reclaimed by a recoverer, or gone. */
  private async whyNotPending(queue: QueueRef, entryId: string): Promise<string> {
    let reclaimed: boolean | undefined;
    try {
      reclaimed = await wasReclaimed(this.client, queue.keys, entryId);
    } catch {
      /* unknown: say both */
    }
    if (reclaimed === true) return 'was reclaimed by another consumer after the visibility timeout (it runs again there)';
    if (reclaimed === false) return 'has no stream entry any more: it is gone (deleted: XDEL, a trim, FLUSHDB, or reported lost)';
    return 'is no longer pending (reclaimed by another consumer, or its entry was deleted)';
  }
}

function taskRef(task: StreamTask, queue: QueueRef): string {
  return `type=${task.type} id=${task.id} queue=${queue.name} entry=${task.entryId}`;
}
