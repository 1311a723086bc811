// The queue and task reads and acts of an Inspector: the base that inspector.ts adds schedules, audit and fleet to.
import { checkFilter, checkState, checkTaskId } from './context.js';
import { InspectorCore } from './inspector-core.js';
import { OptionProblems, show } from '../runtime/options.js';
import * as hist from './history.js';
import { actOptions, checkWindow, counted, filterText, toggled } from './audited.js';
import { getQueueLimits, setQueueLimits, type QueueLimits, type QueueLimitsUpdate } from '../queue/limits.js';
import * as q from './queues.js';
import * as ta from './task-acts.js';
import * as t from './tasks.js';
import type {
  ActOptions,
  ActResult,
  DeadGroups,
  FleetHistory,
  HistoryWindow,
  QueueHistory,
  QueueInfo,
  TaskFilter,
  TaskInfo,
  TaskPage,
  TaskState,
} from './types.js';

/**
 * A limits update as its audit entry shows it: its JSON, or, when it has none (a value nested too deep
 * for JSON.stringify, a BigInt, a cycle), as an error message shows a value: the update is then
 * refused by its check, and recorded failed, not thrown as a RangeError before it (trial 45).
 */
function limitsText(limits: unknown): string {
  try {
    return JSON.stringify(limits) ?? String(limits);
  } catch {
    return show(limits);
  }
}

/** The queue and task reads and acts of an Inspector (see `Inspector`, which extends it). @publicApi */
export class QueueInspector extends InspectorCore {
  // ---------------------------------------------------------------- queues

  /** Queue names known in the namespace, sorted. One SMEMBERS. */
  queueNames(): Promise<string[]> {
    return q.queueNames(this.ctx);
  }

  /**
   * Checks that a queue is known in the namespace (it had a task, a worker or a schedule), for an
   * operator's act or read named by hand (the CLI, the console): a typo is refused, not served as an
   * empty queue. One SMEMBERS.
   * @param hint appended to the message (e.g. how to act on a queue before its first task)
   * @throws QueueNotFoundError naming the queue, the namespace and the known queues; InvalidOptionsError for a name no queue can have
   */
  requireQueue(queue: string, hint = ''): Promise<void> {
    return q.requireQueue(this.ctx, queue, hint);
  }

  /** Every known queue with its counts; two SMEMBERS, then two round trips per queue (see {@link queue}). */
  queues(): Promise<QueueInfo[]> {
    return q.queues(this.ctx);
  }

  /**
   * One queue: counts by state, paused, latency (age of the oldest pending task), processed /
   * failed / lost per UTC day for the last 7 days, approximate memory. Two round trips on the
   * queue's slot (a pipeline of 17 O(1) commands, then XRANGE … COUNT 1), plus SISMEMBER.
   */
  queue(name: string): Promise<QueueInfo> {
    return q.queueInfo(this.ctx, name);
  }

  /**
   * A queue's processed, failed and lost tasks, depth and latency over the last hour (60 points of a
   * minute) or day (24 points of an hour), oldest first, the last being the current minute or hour.
   * The counts are kept by the scripts that already run per batch of tasks (no command of their own
   * per task) in one fixed-size key per queue (1,872 bytes: 60 minutes, 24 hours, 8 days; the depth
   * and latency sampled once a minute by a worker server). One `GET`: O(1) per point.
   * @throws InvalidOptionsError for an unknown window.
   */
  async queueHistory(queue: string, window: HistoryWindow = 'hour'): Promise<QueueHistory> {
    return hist.queueHistory(this.ctx, queue, checkWindow(window));
  }

  /**
   * Every queue's history (see {@link queueHistory}) and their total, point by point. `SMEMBERS`,
   * then one `GET` per queue. @throws InvalidOptionsError for an unknown window.
   */
  async history(window: HistoryWindow = 'hour'): Promise<FleetHistory> {
    return hist.fleetHistory(this.ctx, checkWindow(window));
  }

  /**
   * Pauses a queue for every server (they stop fetching at once: a publish; enqueues still work).
   * One SADD and one PUBLISH. Safe to repeat: a pause of a paused queue is recorded `done` with
   * count 0 and detail `already paused`, `operator.acted` count 0.
   * @returns true when it paused the queue, false when it was paused already.
   */
  async pauseQueue(queue: string, options?: ActOptions): Promise<boolean> {
    const opts = actOptions(options, 'pauseQueue');
    return this.rec('queue.pause', opts, { queue }, () => q.pauseQueue(this.ctx, queue, opts.actor), toggled('already paused'));
  }

  /**
   * Resumes a paused queue. One SREM and one PUBLISH. Safe to repeat: a resume of a queue not
   * paused is recorded `done` with count 0 and detail `not paused`, `operator.acted` count 0.
   * @returns true when it resumed the queue, false when it was not paused.
   */
  async resumeQueue(queue: string, options?: ActOptions): Promise<boolean> {
    const opts = actOptions(options, 'resumeQueue');
    return this.rec('queue.resume', opts, { queue }, () => q.resumeQueue(this.ctx, queue, opts.actor), toggled('not paused'));
  }

  /**
   * Sets a queue's fleet-wide limits (as `QueueClient.setQueueLimits`: `concurrency`, `rate`,
   * `groupConcurrency`, `groupRate`, per-group overrides in `groups`; `null` removes one), as an
   * operator's act: recorded in the audit trail. Every worker applies them at once (a notice on
   * `<ns>:limits`), within 1 s at the latest. @returns the limits now stored.
   * @throws InvalidOptionsError naming the bad value.
   */
  async setQueueLimits(queue: string, limits: QueueLimitsUpdate, options?: ActOptions): Promise<QueueLimits> {
    const opts = actOptions(options, 'setQueueLimits');
    const detail = limitsText(limits);
    return this.rec('queue.limits', opts, { queue, detail }, async () => {
      const now = await setQueueLimits(this.ctx.client, this.namespace, queue, limits);
      this.ctx.emit('queue.limits', opts.actor, { queue, count: 1 });
      return now;
    });
  }

  /** A queue's fleet-wide limits as stored (`{}` when none). One HGETALL (and one of the group overrides when it has some). */
  queueLimits(queue: string): Promise<QueueLimits> {
    this.ctx.keys(queue);
    return getQueueLimits(this.ctx.client, this.namespace, queue);
  }

  // ---------------------------------------------------------------- tasks: read

  /**
   * A page of a queue's tasks in one state, oldest first, payloads decoded; pass the returned
   * `cursor` for the next page (absent at the end). One bounded call (`limit` ≤ 1000, default
   * 50): scheduled/retry/dead by `page-tasks.lua` (O(log N + limit)); pending by XINFO GROUPS +
   * XRANGE … COUNT; active by XPENDING … COUNT + a pipelined XRANGE per entry. With `type`/`error`
   * filters, up to 10,000 tasks are looked at per call. A page of scheduled, retry or dead tasks may
   * be short of `limit` with a cursor: one `page-tasks.lua` call reads at most 8 MB of stored tasks
   * (at least one), so a page of big payloads does not hold Redis for seconds.
   * @throws InvalidTaskStateError for an unknown state; InvalidOptionsError for a bad cursor or limit.
   */
  async taskPage(queue: string, state: TaskState, opts: { cursor?: string; limit?: number } & TaskFilter = {}): Promise<TaskPage> {
    checkFilter(opts);
    return t.taskPage(this.ctx, queue, state, opts);
  }

  /**
   * Tasks of a queue in one state, oldest first (the first `offset + limit`, at most 1000, sliced).
   * Kept for existing callers; prefer {@link taskPage}.
   * @throws InvalidTaskStateError; InvalidOptionsError for an `offset` that is not an integer >= 0 or a
   *   `limit` that is not one >= 1 (an offset of -1 sliced the last task in silence)
   */
  async tasks(queue: string, state: TaskState, { offset = 0, limit = 50 }: { offset?: number; limit?: number } = {}): Promise<TaskInfo[]> {
    checkState(state);
    const p = new OptionProblems();
    p.int('offset', offset, 0);
    p.int('limit', limit, 1);
    p.throwIfAny('task listing');
    const want = Math.min(1000, offset + limit);
    const got: TaskInfo[] = [];
    let cursor: string | undefined;
    do {
      // a page may be short of its limit with a cursor (a page of big payloads): read on to `want`
      const page = await t.taskPage(this.ctx, queue, state, { limit: want - got.length, cursor });
      got.push(...page.tasks);
      cursor = page.cursor;
    } while (cursor !== undefined && got.length < want);
    return got.slice(offset, offset + limit);
  }

  /**
   * A task by id in every queue (or in `queue`), whatever its state: payload, meta, retries, last
   * error with stack, and for a trigger's task its schedule and instant. Cost per queue: one
   * pipeline of ZSCORE ×3 + HGET ×2; if not there, the pending entries list and the pending part
   * of the stream in calls of 1000 entries (a task id is not indexed in a stream).
   * @returns undefined when not found.
   * @throws InvalidOptionsError for an id that is not a non-empty string (no task can have it: it was
   *   looked for through every queue's stream, and answered as not found)
   */
  async findTask(id: string, queue?: string): Promise<TaskInfo | undefined> {
    checkTaskId(id);
    return (await t.findTask(this.ctx, id, queue))?.info;
  }

  /**
   * A task by id, as {@link findTask}, or throws.
   * @throws TaskNotFoundError naming the id and the queue searched (any queue without `queue`), and,
   * when tasks wait in the groups of the queues searched, that a task waiting in its group is not
   * found by id until a worker takes it; InvalidOptionsError for an id that is not a non-empty string
   * (as {@link findTask}).
   */
  async requireTask(id: string, queue?: string): Promise<TaskInfo> {
    checkTaskId(id);
    const row = await t.findTask(this.ctx, id, queue);
    if (!row) throw await t.taskNotFound(this.ctx, queue, id);
    return row.info;
  }

  /** A task by id in one queue (see {@link findTask}); undefined when not found. */
  task(queue: string, id: string): Promise<TaskInfo | undefined> {
    return this.findTask(id, queue);
  }

  /**
   * Dead tasks grouped by error message (first line of the last error), biggest first, filtered by
   * `type` and `error` substring. A bounded scan of at most `scan` (10,000) dead tasks, 1000 per call.
   */
  async deadGroups(opts: { queue?: string; scan?: number } & TaskFilter = {}): Promise<DeadGroups> {
    checkFilter(opts);
    return t.deadGroups(this.ctx, opts);
  }

  // ---------------------------------------------------------------- tasks: act

  /**
   * Puts a dead task back in its queue with a fresh retry budget.
   * @throws TaskNotFoundError when it is not in that queue; ChronosStateError (code `STATE`) naming its
   * state when it is there but not dead (e.g. pending: retried already); InvalidOptionsError for an id
   * that is not a non-empty string (nothing recorded, as for bad options).
   */
  async retryDead(queue: string, id: string, options?: ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'retryDead');
    checkTaskId(id, 'retryDead id');
    return this.rec('dead.retry', opts, { queue, taskId: id }, () => ta.retryDead(this.ctx, queue, id, opts.actor), counted);
  }

  /** Retries every dead task of a queue passing the filter, 200 per script call; `skipped` lists explicit ids live again. */
  async retryAllDead(queue: string, options?: TaskFilter & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'retryAllDead', ['type', 'error', 'group']);
    checkFilter(opts);
    return this.rec(
      'dead.retry',
      opts,
      { queue, detail: filterText(opts) },
      () => ta.retryAllDead(this.ctx, queue, opts, opts.actor),
      counted,
    );
  }

  /**
   * Deletes a pending, scheduled, retry or dead task (only in `state`, when given) and releases its
   * explicit-id and overlap markers. Active tasks are cancelled instead ({@link cancelTask}).
   * @throws TaskNotFoundError when it is not in such a state there; InvalidTaskStateError;
   * InvalidOptionsError for an id that is not a non-empty string (nothing recorded).
   */
  async deleteTask(queue: string, id: string, options?: { state?: TaskState } & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'deleteTask', ['state']);
    checkTaskId(id, 'deleteTask id');
    return this.rec('task.delete', opts, { queue, taskId: id }, () => ta.deleteTask(this.ctx, queue, id, opts.state, opts.actor), counted);
  }

  /**
   * Deletes every task of a state (pending, scheduled, retry or dead) passing the filter, 200 per script
   * call. Pending means the tasks in the queue's stream: tasks waiting in a group (counted in `pending`
   * by {@link queue}) are not listed, and not reached (README "Limits and groups", Not covered).
   */
  async deleteAllTasks(queue: string, state: TaskState, options?: TaskFilter & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'deleteAllTasks', ['type', 'error', 'group']);
    checkFilter(opts);
    const detail = `all ${state}${filterText(opts) ? ` ${filterText(opts)}` : ''}`;
    return this.rec('task.delete', opts, { queue, detail }, () => ta.deleteAllTasks(this.ctx, queue, state, opts, opts.actor), counted);
  }

  /**
   * Moves a scheduled or retry task into the stream now (retry count kept); with `state`, only a task
   * in that state (as `deleteTask`). @throws TaskNotFoundError; InvalidTaskStateError for a state other than scheduled or retry;
   * InvalidOptionsError for an id that is not a non-empty string (nothing recorded)
   */
  async runTask(queue: string, id: string, options?: { state?: 'scheduled' | 'retry' } & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'runTask', ['state']);
    checkTaskId(id, 'runTask id');
    return this.rec('task.run', opts, { queue, taskId: id }, () => ta.runTask(this.ctx, queue, id, opts.actor, opts.state), counted);
  }

  /** Runs now every scheduled (or retry) task of a queue passing the filter, 200 per script call. */
  async runAllTasks(queue: string, state: 'scheduled' | 'retry', options?: TaskFilter & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'runAllTasks', ['type', 'error', 'group']);
    checkFilter(opts);
    const detail = `all ${state}${filterText(opts) ? ` ${filterText(opts)}` : ''}`;
    return this.rec('task.run', opts, { queue, detail }, () => ta.runAllTasks(this.ctx, queue, state, opts, opts.actor), counted);
  }

  /**
   * Cancels an active task: it is dead-lettered at once (reason `cancelled`, never retried) and the
   * server running it is told by a pub/sub notice to abort its `signal` with a `TaskCancelledError`.
   * @throws TaskNotFoundError when the task is not found (in `queue`, or in any queue);
   * ChronosStateError (code `STATE`) naming its state when it is not active (dead, pending, …);
   * InvalidOptionsError for an id that is not a non-empty string (nothing recorded).
   */
  async cancelTask(id: string, options?: { queue?: string } & ActOptions): Promise<ActResult> {
    const opts = actOptions(options, 'cancelTask', ['queue']);
    checkTaskId(id, 'cancelTask id');
    return this.rec(
      'task.cancel',
      opts,
      { queue: opts.queue, taskId: id },
      () => ta.cancelTask(this.ctx, id, opts.queue, opts.actor),
      counted,
    );
  }
}
