import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { EventBus } from '../../core/runtime/events.js';
import { Scheduler } from '../../core/scheduler/scheduler.js';
import { RUNTIME_API } from '../../core/scheduler/schedule-writes.js';
import type { ScheduleDefinition, StoredSchedule } from '../../core/scheduler/definition.js';
import type { AddSchedulesResult, RemoveSchedulesResult, UpsertSchedulesResult } from '../../core/admin/schedule-bulk.js';
import { CHRONOS_EVENT_BUS, CHRONOS_OPTIONS } from '../chronos.constants.js';
import { toChronosLogger } from '../nest-logger.js';
import { withScheduleDefaults, type ResolvedChronosOptions } from '../options/resolve-options.js';
import { InspectorService } from './inspector.service.js';
import { ChronosLifecycle } from './chronos-lifecycle.js';
import { closedByOwner, refuseWhenClosed, sharedClosure } from '../../core/redis/owner-close.js';

/**
 * The scheduler role of this instance, and the runtime schedule API (which delegates to the
 * Inspector: it needs no running scheduler, and acts from here are `operator.acted` events with the
 * actor `app:<instanceId>`, like those of `InspectorService`). At bootstrap it publishes
 * the schedules discovered on `@Cron`/`@Interval` methods and campaigns for the leader lease;
 * while it leads it enqueues every trigger exactly once fleet-wide. At shutdown
 * (`beforeApplicationShutdown`) it resigns, so a follower takes over at once. After `app.close()`
 * the runtime schedule API rejects with a `ChronosStateError` naming the call (unless the app passed
 * in its connection, which stays open and usable).
 * @publicApi
 */
@Injectable()
export class SchedulerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SchedulerService.name);
  private readonly scheduler: Scheduler;
  private running = false;

  static {
    // after app.close() the runtime schedule API names the call (triggerNow, not the Inspector act it
    // delegates to) instead of meeting ioredis's bare "Connection is closed." (trial 32)
    const closed = sharedClosure('this SchedulerService');
    refuseWhenClosed(
      SchedulerService.prototype,
      (s) => (closedByOwner(s.inspector.inspector.redis) ? closed : undefined),
      (name) => RUNTIME_API.has(name),
    );
  }

  /** Created by Nest's injector (inject the service; do not construct it). @internal */
  constructor(
    @Inject(CHRONOS_OPTIONS) private readonly options: ResolvedChronosOptions,
    @Inject(CHRONOS_EVENT_BUS) events: EventBus,
    private readonly inspector: InspectorService,
    private readonly lifecycle: ChronosLifecycle,
  ) {
    this.scheduler = new Scheduler({ ...options.core.scheduler, logger: toChronosLogger(this.logger), events });
    lifecycle.onStop(async () => {
      this.running = false;
      await this.scheduler.stop();
      return !this.scheduler.gaveUpOnRedis;
    });
  }

  /** Whether this instance runs the scheduler role (`scheduler` option). */
  get enabled(): boolean {
    return this.options.scheduler.enabled;
  }

  /** Whether this instance may become leader (`scheduler: { eligible }`). */
  get eligible(): boolean {
    return this.options.scheduler.enabled && this.options.scheduler.eligible;
  }

  /** True between bootstrap and shutdown when the role is enabled. */
  get isRunning(): boolean {
    return this.running;
  }

  /** True while this instance leads at least one of the 16 shards (docs/scheduler-shards.md). */
  get isLeader(): boolean {
    return this.running && this.scheduler.isLeader;
  }

  /** The shards this instance leads (0 to 15, ascending); empty when it leads none or the role is off. */
  get shards(): number[] {
    return this.running ? this.scheduler.shards : [];
  }

  /** Fencing term of this instance's newest shard leadership (0 if it never led one). */
  get term(): number {
    return this.scheduler.term;
  }

  /** Health of the scheduler role's loops (heartbeat, firing), see `Scheduler.health()`. */
  health(): ReturnType<Scheduler['health']> {
    return this.scheduler.health();
  }

  /** Id of this instance as a scheduler (the lease holder's name). */
  get instanceId(): string {
    return this.scheduler.instanceId;
  }

  /** Schedules this instance declares (from its decorators), in registry form. */
  get declaredSchedules(): StoredSchedule[] {
    return this.scheduler.declaredSchedules;
  }

  /**
   * @internal Declares a discovered schedule (validated now: throws InvalidScheduleError /
   * DuplicateScheduleError).
   */
  register(def: ScheduleDefinition, source: string): void {
    this.scheduler.register(def, source);
  }

  /**
   * Adds (or replaces) a schedule at run time, e.g.
   * `addSchedule({ name: 'tenant-42.report', spec: '0 6 * * MON', timeZone: 'Europe/Paris', type: 'report.build', payload: { tenant: 42 } })`.
   * It lives in Redis, so the leader fires it whichever instance added it, and it is never
   * orphaned. Its task type needs a `@TaskHandler` on some worker that serves its queue. Unset
   * `queue`, `maxRetry`, `timeout` and `timeZone` (absent or `undefined`) take the module's defaults. A schedule of that
   * name declared in code (`@Cron`, `@Interval`) is replaced only with `opts.force`.
   * @throws InvalidScheduleError for a bad spec, zone or option; ChronosStateError when a schedule of
   *   that name is declared in code and `force` is not set (nothing is written); InvalidOptionsError
   *   for `opts` that is not an object, has a key other than `force`, or a `force` not true or false.
   */
  addSchedule(def: ScheduleDefinition, opts: { force?: boolean } = {}): Promise<void> {
    const o = this.options;
    return this.inspector.inspector.addSchedule(withScheduleDefaults(def, o), o.timeZone, opts);
  }

  /**
   * Adds or replaces many schedules at run time (e.g. one per tenant), ~125 per Redis call,
   * pipelined: the module's defaults fill unset `queue`, `maxRetry`, `timeout` and `timeZone`, as
   * in {@link addSchedule}. Every definition is validated before anything is written. An
   * unchanged definition is a no-op (no write, no new generation); a changed one keeps its
   * pause and registration time, takes a new generation and is fenced. One change notice per call.
   * A schedule declared in code is replaced only with `opts.force`.
   * @returns counts of the added, changed and unchanged schedules.
   * @throws InvalidScheduleError naming the first bad definition and its `index`; DuplicateScheduleError
   *   when a name is given twice (nothing is written then); ChronosStateError naming the
   *   code-declared ones left untouched when `force` is not set (the others are written);
   *   InvalidOptionsError for `opts` that is not an object, has a key other than `force`, or a
   *   `force` not true or false (nothing is written).
   */
  upsertSchedules(defs: readonly ScheduleDefinition[], opts: { force?: boolean } = {}): Promise<UpsertSchedulesResult> {
    return this.scheduler.upsertSchedules(this.withDefaults(defs), opts);
  }

  /**
   * Adds the schedules whose names do not exist yet; existing ones are left untouched and listed
   * in `existing`. Otherwise as {@link upsertSchedules}.
   * @throws InvalidScheduleError naming the first bad definition and its `index`; DuplicateScheduleError
   */
  addSchedules(defs: readonly ScheduleDefinition[]): Promise<AddSchedulesResult> {
    return this.scheduler.addSchedules(this.withDefaults(defs));
  }

  /**
   * Removes many schedules, ~125 per Redis call, pipelined; names not in the registry are listed
   * in `missing`. Like {@link removeSchedule}, a schedule declared in code is removed too (it comes
   * back when an instance declaring it restarts). One `operator.acted` (`schedule.remove`) for a
   * call that removed any, recorded in the Inspector's audit trail as removeSchedule is (origin
   * `app <instanceId>`, the first 10 names in its detail).
   * @throws InvalidScheduleError for a bad name (with its `index`); DuplicateScheduleError
   */
  removeSchedules(names: readonly string[]): Promise<RemoveSchedulesResult> {
    return this.scheduler.removeSchedules(names, { force: true });
  }

  /** The module's defaults under each definition (a bad input is left for the validation to name). */
  private withDefaults(defs: readonly ScheduleDefinition[]): readonly ScheduleDefinition[] {
    return Array.isArray(defs) ? defs.map((def) => withScheduleDefaults(def, this.options)) : defs;
  }

  /** Removes a schedule from the registry (a declared one comes back when an instance restarts). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  removeSchedule(name: string): Promise<void> {
    return this.inspector.removeSchedule(name, { force: true });
  }

  /**
   * Pauses a schedule fleet-wide: its triggers are skipped until resumed. The optional `note` is
   * shown by the Inspector while it stays paused. @returns false when it was paused already (nothing changed, its note kept).
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
   */
  pauseSchedule(name: string, note?: string): Promise<boolean> {
    return this.inspector.pauseSchedule(name, { note });
  }

  /** Resumes a paused schedule. @returns false when it was not paused (nothing changed). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  resumeSchedule(name: string): Promise<boolean> {
    return this.inspector.resumeSchedule(name);
  }

  /** Enqueues one task of the schedule now, without shifting its cadence. @returns the task id. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  triggerNow(name: string): Promise<string> {
    return this.inspector.triggerSchedule(name);
  }

  /**
   * @internal Nest lifecycle: publishes the declared schedules and campaigns for the lease. If it (or
   * the worker role) fails to start, whatever Chronos opened in this app is closed.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.lifecycle.stopRequested) return; // a failed start, or the app closed while it booted
    if (!this.enabled) {
      this.logger.log(`Scheduler role disabled on this instance (schedules=${this.declaredSchedules.length} are not declared here)`);
      return;
    }
    try {
      await this.scheduler.start();
    } catch (err) {
      await this.lifecycle.startFailed();
      throw err;
    }
    if (this.lifecycle.failed)
      await this.scheduler.stop(); // the worker role failed meanwhile
    else this.running = true;
  }

  /**
   * @internal Nest lifecycle: stops firing and resigns (a follower takes over at once); closes owned
   * connections. At the same time as the worker role's drain (ChronosLifecycle).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    await this.lifecycle.stopRoles(); // with the worker role's drain
    await this.scheduler.stop(); // done by now: its error, if any, is reported here
  }
}
