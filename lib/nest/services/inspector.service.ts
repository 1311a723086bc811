import { Inject, Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { EventBus, type ChronosEvent } from '../../core/runtime/events.js';
import {
  Inspector,
  type ActOptions,
  type ActResult,
  type AuditPage,
  type AuditQuery,
  type BackfillResult,
  type DeadGroups,
  type FireInfo,
  type FleetHistory,
  type HistoryWindow,
  type InstanceInfo,
  type QueueHistory,
  type ScheduleActivity,
  type LeaderInfo,
  type QueueInfo,
  type RedisInfo,
  type ScheduleInfo,
  type SchedulePage,
  type SchedulePageQuery,
  type ServerInfo,
  type TaskFilter,
  type TaskInfo,
  type TaskPage,
  type TaskState,
} from '../../core/admin/inspector.js';
import type { QueueLimits, QueueLimitsUpdate } from '../../core/queue/limits.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import type { ResolvedChronosOptions } from '../options/resolve-options.js';
import { ChronosClient } from './chronos.client.js';
import { closedByOwner, refuseWhenClosed, sharedClosure } from '../../core/redis/owner-close.js';

/** Everything at a glance: what `InspectorService.overview()` returns. @publicApi */
export interface ChronosOverview {
  /** The current leader (instance, fencing term, since — epoch ms — and remaining lease ms), or null. */
  leader: LeaderInfo | null;
  /** Every schedule with spec, time zone, next triggers, last fire, paused and liveness. */
  schedules: ScheduleInfo[];
  /** Every known queue with its counts by state. */
  queues: QueueInfo[];
  /** Worker servers (from their heartbeats and presence; see `Inspector.servers`). */
  servers: ServerInfo[];
}

/**
 * Chronos for operators, for the whole namespace (every instance, not only this one): the core
 * `Inspector`'s reads and acts, plus `events$`, this instance's lifecycle events. Any instance;
 * every call goes to Redis. Acts are atomic, safe to repeat, and emit an `operator.acted` event on
 * `events$` naming the `actor` (default `app:<instanceId>`). The Redis cost of each call is on
 * the core `Inspector`'s method of the same name. After `app.close()` every call rejects with a
 * `ChronosStateError` naming it (unless the app passed in its connection, which stays open and usable).
 * @publicApi
 */
@Injectable()
export class InspectorService {
  /**
   * Lifecycle events of **this instance** as an rxjs Observable: `task.enqueued` (by this
   * instance's client), `task.started/succeeded/failed/retried/dead/requeued` (run here),
   * `schedule.fired/skipped` (while this instance leads), `leader.acquired/lost`, and
   * `operator.acted` (acts done through this service). Instants are epoch ms. Subscribers are
   * called synchronously from the engine: keep them quick.
   */
  readonly events$: Observable<ChronosEvent>;
  /** The core Inspector behind this service (shares the client's connection). */
  readonly inspector: Inspector;

  /** Created by Nest's injector (inject the service; do not construct it). @internal */
  constructor(
    @Inject(CHRONOS_OPTIONS) options: ResolvedChronosOptions,
    @Inject(CHRONOS_EVENT_BUS) events: EventBus,
    client: ChronosClient,
  ) {
    // shares the client's connection (the client closes it)
    this.inspector = new Inspector({
      connection: client.redis,
      namespace: options.namespace,
      livenessWindow: options.heartbeatInterval * 3,
      events,
      actor: `app:${options.instanceId}`,
      origin: `app ${options.instanceId}`,
      compactSchedules: options.core.scheduler.compactSchedules,
      maxPayloadBytes: options.maxPayloadBytes,
    });
    this.events$ = new Observable<ChronosEvent>((subscriber) => events.subscribe((e) => subscriber.next(e)));
  }

  /** Every known queue with its counts, latency, 7 days of counters and approximate memory. */
  queues(): Promise<QueueInfo[]> {
    return this.inspector.queues();
  }

  /** One queue's counts (pending, active, scheduled, retry, dead, paused, latency, days, memory). */
  queue(name: string): Promise<QueueInfo> {
    return this.inspector.queue(name);
  }

  /** A page of tasks in one state, oldest first, with the cursor of the next page. @throws InvalidTaskStateError */
  taskPage(queue: string, state: TaskState, opts?: { cursor?: string; limit?: number } & TaskFilter): Promise<TaskPage> {
    return this.inspector.taskPage(queue, state, opts);
  }

  /**
   * Tasks of a queue in one state, oldest first (at most the first 1000). @defaultValue page `{ offset: 0, limit: 50 }`
   * @throws InvalidTaskStateError; InvalidOptionsError for an `offset` not an integer >= 0 or a `limit` not one >= 1
   */
  tasks(queue: string, state: TaskState, page?: { offset?: number; limit?: number }): Promise<TaskInfo[]> {
    return this.inspector.tasks(queue, state, page);
  }

  /** A task by id in a queue, whatever its state; undefined when not found. */
  task(queue: string, id: string): Promise<TaskInfo | undefined> {
    return this.inspector.task(queue, id);
  }

  /** A task by id in every queue (or in `queue`); undefined when not found. @throws InvalidOptionsError for an id that is not a non-empty string */
  findTask(id: string, queue?: string): Promise<TaskInfo | undefined> {
    return this.inspector.findTask(id, queue);
  }

  /** Dead tasks grouped by error message, from a bounded scan. */
  deadGroups(opts?: { queue?: string; scan?: number } & TaskFilter): Promise<DeadGroups> {
    return this.inspector.deadGroups(opts);
  }

  /** Every schedule with its next `n` triggers (epoch ms), last fire, time zone, paused (and note), origin and liveness. @throws InvalidOptionsError for an `n` not an integer 0-1000 */
  schedules(n = 5): Promise<ScheduleInfo[]> {
    return this.inspector.schedules(n);
  }

  /**
   * A page of schedules in name order, filtered by labels, name prefix and state; pass the result's
   * `cursor` (null at the end) for the next page. `limit` 1-1000 (default 100).
   * @throws InvalidOptionsError naming a bad limit, prefix, state, cursor or label.
   */
  schedulePage(query: SchedulePageQuery = {}): Promise<SchedulePage> {
    return this.inspector.schedulePage(query);
  }

  /** One schedule, with its next `n` triggers. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for an `n` not an integer 0-1000 */
  schedule(name: string, n = 5): Promise<ScheduleInfo> {
    return this.inspector.schedule(name, n);
  }

  /** The last `limit` fires of a schedule (at most 100 kept, or the module option `historyLimit`), newest first, with their outcomes. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for a `limit` not an integer ≥ 1 */
  scheduleHistory(name: string, limit = 20): Promise<FireInfo[]> {
    return this.inspector.scheduleHistory(name, limit);
  }

  /**
   * A queue's processed / failed / lost tasks, depth and latency per minute of the last hour, or per
   * hour of the last day (one `GET`). @throws InvalidOptionsError for an unknown window.
   */
  queueHistory(queue: string, window: HistoryWindow = 'hour'): Promise<QueueHistory> {
    return this.inspector.queueHistory(queue, window);
  }

  /** Every queue's history and their total, per minute of the last hour or per hour of the last day. */
  history(window: HistoryWindow = 'hour'): Promise<FleetHistory> {
    return this.inspector.history(window);
  }

  /** Each schedule's last fires (on time, late, skipped, failed), fires vs expected over the last hour and day, and why it is silent; pass `schedules` already read (from `schedules()`) to save that read. */
  scheduleActivity(schedules?: ScheduleInfo[]): Promise<ScheduleActivity[]> {
    return this.inspector.scheduleActivity(schedules);
  }

  /** The audit trail, newest first: every act with who, what, when, from where and the result (kept 30 days, at most 10,000). */
  audit(query?: AuditQuery): Promise<AuditPage> {
    return this.inspector.audit(query);
  }

  /** Sets a queue's fleet-wide limits as an operator's act (recorded in the audit trail). @throws InvalidOptionsError */
  setQueueLimits(queue: string, limits: QueueLimitsUpdate, opts?: ActOptions): Promise<QueueLimits> {
    return this.inspector.setQueueLimits(queue, limits, opts);
  }

  /** The current leader (`instance`, `term`, `since` epoch ms, `ttlMs`), or null when nobody leads. */
  leader(): Promise<LeaderInfo | null> {
    return this.inspector.leader();
  }

  /** Worker servers with their state (`live`, `overdue` with the entries it holds), queues, concurrency and active count. */
  servers(): Promise<ServerInfo[]> {
    return this.inspector.servers();
  }

  /** Scheduler instances seen recently, with liveness. */
  instances(): Promise<InstanceInfo[]> {
    return this.inspector.instances();
  }

  /** Redis version, mode, memory and eviction policy (with a warning unless `noeviction`). */
  redisInfo(): Promise<RedisInfo> {
    return this.inspector.redisInfo();
  }

  /** Pauses a queue for every worker of the namespace (they stop fetching from it at once: a publish; enqueues still work). @returns false when it was paused already (nothing changed). */
  pauseQueue(queue: string, opts?: ActOptions): Promise<boolean> {
    return this.inspector.pauseQueue(queue, opts);
  }

  /** Resumes a paused queue. @returns false when it was not paused (nothing changed). */
  resumeQueue(queue: string, opts?: ActOptions): Promise<boolean> {
    return this.inspector.resumeQueue(queue, opts);
  }

  /** A queue's fleet-wide limits as stored (`{}` when none). */
  queueLimits(queue: string): Promise<QueueLimits> {
    return this.inspector.queueLimits(queue);
  }

  /** Puts a dead task back in its queue with a fresh retry budget. @throws TaskNotFoundError; ChronosStateError naming its state when it is not dead (e.g. retried already). */
  retryDead(queue: string, id: string, opts?: ActOptions): Promise<ActResult> {
    return this.inspector.retryDead(queue, id, opts);
  }

  /** Retries every dead task of a queue (optionally only of a `type`, or whose error contains `error`). */
  retryAllDead(queue: string, opts?: TaskFilter & ActOptions): Promise<ActResult> {
    return this.inspector.retryAllDead(queue, opts);
  }

  /** Deletes a pending, scheduled, retry or dead task. @throws TaskNotFoundError */
  deleteTask(queue: string, id: string, opts?: { state?: TaskState } & ActOptions): Promise<ActResult> {
    return this.inspector.deleteTask(queue, id, opts);
  }

  /** Deletes every task of a state (pending, scheduled, retry, dead) passing the filter. */
  deleteAllTasks(queue: string, state: TaskState, opts?: TaskFilter & ActOptions): Promise<ActResult> {
    return this.inspector.deleteAllTasks(queue, state, opts);
  }

  /**
   * Runs a scheduled or retry task now (retry count kept); with `state`, only a task in that state.
   * @throws TaskNotFoundError; InvalidTaskStateError for a state other than scheduled or retry
   */
  runTask(queue: string, id: string, opts?: { state?: 'scheduled' | 'retry' } & ActOptions): Promise<ActResult> {
    return this.inspector.runTask(queue, id, opts);
  }

  /** Runs now every scheduled (or retry) task passing the filter. */
  runAllTasks(queue: string, state: 'scheduled' | 'retry', opts?: TaskFilter & ActOptions): Promise<ActResult> {
    return this.inspector.runAllTasks(queue, state, opts);
  }

  /** Cancels an active task (dead-lettered at once, its signal aborted with a `TaskCancelledError`). @throws TaskNotFoundError */
  cancelTask(id: string, opts?: { queue?: string } & ActOptions): Promise<ActResult> {
    return this.inspector.cancelTask(id, opts);
  }

  /** Pauses a schedule fleet-wide, with an optional note. @returns false when it was paused already (nothing changed, its note kept). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  pauseSchedule(name: string, opts?: { note?: string } & ActOptions): Promise<boolean> {
    return this.inspector.pauseSchedule(name, opts);
  }

  /** Resumes a paused schedule. @returns false when it was not paused (nothing changed). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  resumeSchedule(name: string, opts?: ActOptions): Promise<boolean> {
    return this.inspector.resumeSchedule(name, opts);
  }

  /** Enqueues one task of the schedule now (cadence untouched). @returns the task id. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  triggerSchedule(name: string, opts?: ActOptions): Promise<string> {
    return this.inspector.triggerSchedule(name, opts);
  }

  /** Removes a runtime or orphaned schedule (`force` for one that live instances declare). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  removeSchedule(name: string, opts?: { force?: boolean } & ActOptions): Promise<void> {
    return this.inspector.removeSchedule(name, opts);
  }

  /** Enqueues each trigger in [fromMs, toMs] not enqueued before, once; reports how many were new. */
  backfillSchedule(name: string, fromMs: number, toMs: number, opts?: ActOptions): Promise<BackfillResult> {
    return this.inspector.backfillSchedule(name, fromMs, toMs, opts);
  }

  /** Leader, schedules, queues and servers in one call (e.g. for a status endpoint). */
  async overview(nextTriggers = 3): Promise<ChronosOverview> {
    const [leader, schedules, queues, servers] = await Promise.all([
      this.leader(),
      this.schedules(nextTriggers),
      this.queues(),
      this.servers(),
    ]);
    return { leader, schedules, queues, servers };
  }
}

// after app.close() a call names itself (overview(), not the first read it makes), as the core Inspector's calls do (trial 32)
const SERVICE_CLOSED = sharedClosure('this InspectorService');
refuseWhenClosed(
  InspectorService.prototype,
  (i) => (closedByOwner(i.inspector.redis) ? SERVICE_CLOSED : undefined),
  () => true,
);
