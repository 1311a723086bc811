/**
 * The failure paths of a run, split from executor.ts (which runs handlers and acks their successes):
 * a failed attempt retried with backoff (retry.lua) or dead (kill.lua) when its budget is spent, a
 * task of a type without a handler, and why an outcome found its entry no longer pending.
 */
import { DEFAULTS } from '../runtime/defaults.js';
import { HandlerNotFoundError } from '../runtime/errors.js';
import type { EventBus } from '../runtime/events.js';
import type { ChronosLogger } from '../runtime/logger.js';
import { killScript, retryScript } from '../redis/commands/queue.js';
import { DEAD_REASON, META, type DeadReason } from '../redis/protocol.js';
import { wasReclaimed } from '../redis/commands/recovery.js';
import type { RedisClient } from '../redis/types.js';
import type { TaskCounters } from './heartbeat.js';
import { encodeStored, markerKeys, type StreamTask, type TaskMeta } from '../queue/codec.js';
import { checkedBackoffDelay, defaultBackoff, type BackoffFn } from '../queue/task.js';
import { engineTime } from '../runtime/time.js';
import { errorMessage, errorText, isNonRetryable, isTimeout } from './error-text.js';
import type { ExecutorParts } from './executor.js';
import type { TaskRun, QueueRef } from './task-run.js';

/** How many times a task of an unknown type bounces (short backoff) before it is dead. */
const NO_HANDLER_BOUNCES = 3;

/** Records the failures of runs: retry or dead. One per executor. */
export class FailurePaths {
  private readonly client: RedisClient;
  private readonly logger: ChronosLogger;
  private readonly events: EventBus;
  private readonly opts: ExecutorParts['opts'];
  private readonly counters: TaskCounters;
  private readonly forwarder: ExecutorParts['forwarder'];

  constructor(p: ExecutorParts) {
    ({ client: this.client, logger: this.logger, events: this.events } = p);
    ({ opts: this.opts, counters: this.counters, forwarder: this.forwarder } = p);
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

  /** A handler's failure (or timeout): retried with backoff, or dead when its budget is spent or the error is a NonRetryableError. */
  async fail(run: TaskRun, err: unknown, backoff: BackoffFn | undefined): Promise<void> {
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

/** How a log line names a task: type, id, queue, stream entry. */
export function taskRef(task: StreamTask, queue: QueueRef): string {
  return `type=${task.type} id=${task.id} queue=${queue.name} entry=${task.entryId}`;
}
