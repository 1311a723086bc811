import { DEFAULTS } from '../runtime/defaults.js';
import type { ScheduleDefinition } from '../scheduler/definition.js';
import { checkFilter, checkState } from './context.js';
import { InspectorCore } from './inspector-core.js';
import * as fleet from './fleet.js';
import * as hist from './history.js';
import * as act from './schedule-activity.js';
import * as au from './audit.js';
import type { AuditPage, AuditQuery } from './audit.js';
import { checkWindow, counted, filterText } from './audited.js';
import { getQueueLimits, setQueueLimits, type QueueLimits, type QueueLimitsUpdate } from '../queue/limits.js';
import * as q from './queues.js';
import * as sa from './schedule-acts.js';
import * as s from './schedules.js';
import { schedulePage, type SchedulePage, type SchedulePageQuery } from './schedule-page.js';
import * as ta from './task-acts.js';
import * as t from './tasks.js';
import type {
  ActOptions,
  ActResult,
  BackfillResult,
  DeadGroups,
  FireInfo,
  FleetHistory,
  HistoryWindow,
  InstanceInfo,
  LeaderInfo,
  QueueHistory,
  QueueInfo,
  RedisInfo,
  ScheduleActivity,
  ScheduleInfo,
  ServerInfo,
  TaskFilter,
  TaskInfo,
  TaskPage,
  TaskState,
} from './types.js';

export * from './types.js';
export type { AuditQuery, AuditPage } from './audit.js';
export type { SchedulePage, SchedulePageQuery, ScheduleState } from './schedule-page.js';

/**
 * Reads and acts over the Chronos key layout of one namespace: the single door for the NestJS
 * `InspectorService`, the `chronos` CLI and the web console (none of which touches Redis itself).
 * Any instance, no running worker or scheduler needed.
 *
 * Reads are bounded per call: O(1) counters, cursors and `COUNT`/`LIMIT` ranges, never an O(N)
 * command over a big key. Acts are atomic per task (one Lua script per batch of at most 200), safe
 * to repeat (a task moves at most once), and each emits an `operator.acted` event naming its
 * `actor`. Instants are epoch ms, durations ms. The Redis cost of every call is in its docstring.
 * @publicApi
 */
export class Inspector extends InspectorCore {
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

  /** Pauses a queue for every server (they stop fetching at once: a publish; enqueues still work). One SADD and one PUBLISH. */
  async pauseQueue(queue: string, opts: ActOptions = {}): Promise<void> {
    await this.rec(
      'queue.pause',
      opts,
      { queue },
      () => q.pauseQueue(this.ctx, queue, opts.actor),
      (added) => (added ? 1 : 0),
    );
  }

  /** Resumes a paused queue. One SREM. */
  async resumeQueue(queue: string, opts: ActOptions = {}): Promise<void> {
    await this.rec(
      'queue.resume',
      opts,
      { queue },
      () => q.resumeQueue(this.ctx, queue, opts.actor),
      (removed) => (removed ? 1 : 0),
    );
  }

  /**
   * Sets a queue's fleet-wide limits (as `QueueClient.setQueueLimits`: `concurrency`, `rate`,
   * `groupConcurrency`, `groupRate`, per-group overrides in `groups`; `null` removes one), as an
   * operator's act: recorded in the audit trail. Every worker applies them at once (a notice on
   * `<ns>:limits`), within 1 s at the latest. @returns the limits now stored.
   * @throws InvalidOptionsError naming the bad value.
   */
  setQueueLimits(queue: string, limits: QueueLimitsUpdate, opts: ActOptions = {}): Promise<QueueLimits> {
    const detail = JSON.stringify(limits);
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
   * filters, up to 10,000 tasks are looked at per call.
   * @throws InvalidTaskStateError for an unknown state; InvalidOptionsError for a bad cursor or limit.
   */
  taskPage(queue: string, state: TaskState, opts: { cursor?: string; limit?: number } & TaskFilter = {}): Promise<TaskPage> {
    checkFilter(opts);
    return t.taskPage(this.ctx, queue, state, opts);
  }

  /**
   * Tasks of a queue in one state, oldest first (the first `offset + limit`, at most 1000, sliced).
   * Kept for existing callers; prefer {@link taskPage}. @throws InvalidTaskStateError
   */
  async tasks(queue: string, state: TaskState, { offset = 0, limit = 50 }: { offset?: number; limit?: number } = {}): Promise<TaskInfo[]> {
    checkState(state);
    const page = await t.taskPage(this.ctx, queue, state, { limit: Math.min(1000, offset + limit) });
    return page.tasks.slice(offset, offset + limit);
  }

  /**
   * A task by id in every queue (or in `queue`), whatever its state: payload, meta, retries, last
   * error with stack, and for a trigger's task its schedule and instant. Cost per queue: one
   * pipeline of ZSCORE ×3 + HGET ×2; if not there, the pending entries list and the pending part
   * of the stream in calls of 1000 entries (a task id is not indexed in a stream).
   * @returns undefined when not found.
   */
  async findTask(id: string, queue?: string): Promise<TaskInfo | undefined> {
    return (await t.findTask(this.ctx, id, queue))?.info;
  }

  /** A task by id in one queue (see {@link findTask}); undefined when not found. */
  task(queue: string, id: string): Promise<TaskInfo | undefined> {
    return this.findTask(id, queue);
  }

  /**
   * Dead tasks grouped by error message (first line of the last error), biggest first, filtered by
   * `type` and `error` substring. A bounded scan of at most `scan` (10,000) dead tasks, 1000 per call.
   */
  deadGroups(opts: { queue?: string; scan?: number } & TaskFilter = {}): Promise<DeadGroups> {
    checkFilter(opts);
    return t.deadGroups(this.ctx, opts);
  }

  // ---------------------------------------------------------------- tasks: act

  /**
   * Puts a dead task back in its queue with a fresh retry budget.
   * @throws TaskNotFoundError when it is not in that queue; ChronosStateError (code `STATE`) naming its
   * state when it is there but not dead (e.g. pending: retried already).
   */
  retryDead(queue: string, id: string, opts: ActOptions = {}): Promise<ActResult> {
    return this.rec('dead.retry', opts, { queue, taskId: id }, () => ta.retryDead(this.ctx, queue, id, opts.actor), counted);
  }

  /** Retries every dead task of a queue passing the filter, 200 per script call; `skipped` lists explicit ids live again. */
  retryAllDead(queue: string, opts: TaskFilter & ActOptions = {}): Promise<ActResult> {
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
   * @throws TaskNotFoundError when it is not in such a state there; InvalidTaskStateError.
   */
  deleteTask(queue: string, id: string, opts: { state?: TaskState } & ActOptions = {}): Promise<ActResult> {
    return this.rec('task.delete', opts, { queue, taskId: id }, () => ta.deleteTask(this.ctx, queue, id, opts.state, opts.actor), counted);
  }

  /** Deletes every task of a state (pending, scheduled, retry or dead) passing the filter, 200 per script call. */
  deleteAllTasks(queue: string, state: TaskState, opts: TaskFilter & ActOptions = {}): Promise<ActResult> {
    checkFilter(opts);
    const detail = `all ${state}${filterText(opts) ? ` ${filterText(opts)}` : ''}`;
    return this.rec('task.delete', opts, { queue, detail }, () => ta.deleteAllTasks(this.ctx, queue, state, opts, opts.actor), counted);
  }

  /**
   * Moves a scheduled or retry task into the stream now (retry count kept); with `state`, only a task
   * in that state (as `deleteTask`). @throws TaskNotFoundError; InvalidTaskStateError for a state other than scheduled or retry
   */
  runTask(queue: string, id: string, opts: { state?: 'scheduled' | 'retry' } & ActOptions = {}): Promise<ActResult> {
    return this.rec('task.run', opts, { queue, taskId: id }, () => ta.runTask(this.ctx, queue, id, opts.actor, opts.state), counted);
  }

  /** Runs now every scheduled (or retry) task of a queue passing the filter, 200 per script call. */
  runAllTasks(queue: string, state: 'scheduled' | 'retry', opts: TaskFilter & ActOptions = {}): Promise<ActResult> {
    checkFilter(opts);
    const detail = `all ${state}${filterText(opts) ? ` ${filterText(opts)}` : ''}`;
    return this.rec('task.run', opts, { queue, detail }, () => ta.runAllTasks(this.ctx, queue, state, opts, opts.actor), counted);
  }

  /**
   * Cancels an active task: it is dead-lettered at once (reason `cancelled`, never retried) and the
   * server running it is told by a pub/sub notice to abort its `signal` with a `TaskCancelledError`.
   * @throws TaskNotFoundError when the task is not found (in `queue`, or in any queue);
   * ChronosStateError (code `STATE`) naming its state when it is not active (dead, pending, …).
   */
  cancelTask(id: string, opts: { queue?: string } & ActOptions = {}): Promise<ActResult> {
    return this.rec(
      'task.cancel',
      opts,
      { queue: opts.queue, taskId: id },
      () => ta.cancelTask(this.ctx, id, opts.queue, opts.actor),
      counted,
    );
  }

  // ---------------------------------------------------------------- schedules

  /**
   * Every schedule: spec, zone, next `n` triggers, last fired, paused with its note, origin, the
   * instances declaring it with liveness, orphaned (with `orphanedSince`); all of them, sorted
   * by name in code-unit order (`B` before `a`, as {@link schedulePage} pages them). Cost, in calls of at most 1,000 names or fields each: HSCAN of the registry and the pause
   * notes, ZRANGE + TIME, MGET of the instances' declarations, then one pipeline of SMISMEMBER per
   * distinct declaration and HMGET of lastFired per target queue, and HMGET of the orphaned ones'
   * orphaned-since instants (none when none is orphaned). No call walks a whole set or hash (10,000 schedules:
   * about 30 calls, none over a millisecond of Redis).
   */
  schedules(n = 5): Promise<ScheduleInfo[]> {
    return s.schedules(this.ctx, n);
  }

  /**
   * A page of schedules in name order, filtered by labels (all of them), name prefix and state
   * (`active`, `paused`, `orphaned`); `cursor` of the result (null at the end) gives the next page.
   * The view of {@link schedules} for the page's schedules only, over the registry's indexes
   * (backfilled first when a version without them wrote it). Cost: ZRANGEBYLEX of the smallest
   * label index and HMGET of the definitions, at most 5,000 looked at per call (a sparse filter
   * may return a short page with a cursor), then the view of the page. `limit` 1-1000 (default 100).
   * @throws InvalidOptionsError naming a bad limit, prefix, state, cursor or label.
   */
  schedulePage(query: SchedulePageQuery = {}): Promise<SchedulePage> {
    return schedulePage(this.ctx, query);
  }

  /** One schedule (see {@link schedules}). @throws ScheduleNotFoundError */
  schedule(name: string, n = 5): Promise<ScheduleInfo> {
    return s.schedule(this.ctx, name, n);
  }

  /**
   * The last `limit` fires of a schedule, newest first (at most 100 kept), each with its outcome and
   * where its task is now. Cost: HGET, LRANGE, ZSCORE ×3 per task (pipelined), and a bounded look
   * through the stream. @throws ScheduleNotFoundError
   */
  scheduleHistory(name: string, limit = 20): Promise<FireInfo[]> {
    return s.history(this.ctx, name, limit);
  }

  /**
   * What each schedule did lately: its last 30 fires marked on time / late / skipped / failed (a
   * sparkline), triggers its spec expected vs fired over the last hour and day, triggers overdue,
   * and, when it should have fired and did not, why (no leader, not firing, orphaned, paused for an
   * hour or more, its last fires failing). Pass `schedules` already read to save that read. Cost:
   * {@link schedules} (unless given) and {@link leader}, an `LRANGE` of 30 per schedule, and per
   * target queue a pipeline of `ZSCORE` ×2 per fired task.
   */
  async scheduleActivity(schedules?: ScheduleInfo[]): Promise<ScheduleActivity[]> {
    const [list, leader] = await Promise.all([schedules ?? s.schedules(this.ctx, 1), fleet.leader(this.ctx)]);
    return act.scheduleActivity(this.ctx, list, (name) => fleet.shardLed(leader, name));
  }

  /** Scheduler instances seen in the last day, with liveness. One pipeline (ZRANGE + TIME). */
  instances(): Promise<InstanceInfo[]> {
    return s.instances(this.ctx);
  }

  /**
   * Adds (or replaces) a runtime schedule (`schedule-admin.lua` + SADD). Unset `timeZone` is
   * `defaultTimeZone`. A schedule of that name declared in code is replaced only with `opts.force`.
   * @throws InvalidScheduleError; ChronosStateError when it is declared in code and `force` is not set (nothing is written)
   */
  addSchedule(def: ScheduleDefinition, defaultTimeZone: string = DEFAULTS.timeZone, opts: { force?: boolean } = {}): Promise<void> {
    return sa.addSchedule(this.ctx, def, defaultTimeZone, opts.force === true);
  }

  /** Pauses a schedule fleet-wide, with an optional note (at most 1,000 characters). One script. @throws ScheduleNotFoundError; InvalidOptionsError for a longer note */
  pauseSchedule(name: string, opts: { note?: string } & ActOptions = {}): Promise<void> {
    return this.rec('schedule.pause', opts, { schedule: name, detail: opts.note }, () =>
      sa.pauseSchedule(this.ctx, name, opts.note, opts.actor),
    );
  }

  /** Resumes a paused schedule. One script. @throws ScheduleNotFoundError */
  resumeSchedule(name: string, opts: ActOptions = {}): Promise<void> {
    return this.rec('schedule.resume', opts, { schedule: name }, () => sa.resumeSchedule(this.ctx, name, opts.actor));
  }

  /** Enqueues one task of the schedule now, cadence untouched. @returns the task id. @throws ScheduleNotFoundError */
  triggerSchedule(name: string, opts: ActOptions = {}): Promise<string> {
    return this.rec(
      'schedule.trigger',
      opts,
      { schedule: name },
      () => sa.triggerSchedule(this.ctx, name, opts.actor),
      () => 1,
    );
  }

  /**
   * Removes a runtime or orphaned schedule (a code-declared one that live instances declare needs
   * `force`). @throws ScheduleNotFoundError; ChronosStateError
   */
  removeSchedule(name: string, opts: { force?: boolean } & ActOptions = {}): Promise<void> {
    const detail = opts.force ? 'force' : undefined;
    return this.rec('schedule.remove', opts, { schedule: name, detail }, () => sa.removeSchedule(this.ctx, name, opts.force, opts.actor));
  }

  /**
   * Enqueues each trigger in [fromMs, toMs] not enqueued before, once, by its dedup key; reports
   * how many were new. At most 10,000 triggers; 250 per script call.
   * @throws ScheduleNotFoundError; InvalidOptionsError
   */
  backfillSchedule(name: string, fromMs: number, toMs: number, opts: ActOptions = {}): Promise<BackfillResult> {
    const detail = `${new Date(fromMs).toISOString()} … ${new Date(toMs).toISOString()}`;
    return this.rec(
      'schedule.backfill',
      opts,
      { schedule: name, detail },
      () => sa.backfillSchedule(this.ctx, name, fromMs, toMs, opts.actor),
      (r) => r.enqueued,
    );
  }

  // ---------------------------------------------------------------- audit

  /**
   * The audit trail, newest first: every act done through an Inspector (console, CLI,
   * `InspectorService`), done or failed, with who (`actor`), what, when (Redis time), from where
   * (`origin`) and the result. Kept in one STREAM, at most 10,000 entries and 30 days. One
   * `XREVRANGE … COUNT` (at most 2,000 entries looked at when filtering). @throws InvalidOptionsError
   */
  audit(query: AuditQuery = {}): Promise<AuditPage> {
    return au.readAudit(this.ctx, query);
  }

  // ---------------------------------------------------------------- fleet

  /**
   * The shards' leaders (each shard's instance, term and TTL left) and the instance leading the most
   * of them, or null when no shard is led. One MULTI (HGETALL of the shard leases, TIME).
   */
  leader(): Promise<LeaderInfo | null> {
    return fleet.leader(this.ctx);
  }

  /** Live worker servers: ZRANGEBYSCORE + one GET per server (pipelined). */
  servers(): Promise<ServerInfo[]> {
    return fleet.servers(this.ctx);
  }

  /** Redis version, mode, role, memory and eviction policy (warning unless `noeviction`). One INFO. */
  redisInfo(): Promise<RedisInfo> {
    return fleet.redisInfo(this.ctx);
  }
}
