/**
 * The runtime schedule API of a {@link Scheduler} (add, upsert, remove, pause, resume, trigger), moved
 * out of scheduler.ts to keep it readable; `Scheduler` extends it.
 */
import type { InspectorContext } from '../admin/context.js';
import { audited, toggled, type ActOutcome, type AuditTarget } from '../admin/audited.js';
import * as acts from '../admin/schedule-acts.js';
import * as bulk from '../admin/schedule-bulk.js';
import type { AddSchedulesResult, RemoveSchedulesResult, UpsertSchedulesResult } from '../admin/schedule-bulk.js';
import type { OperatorAction } from '../runtime/events.js';
import { ownerClosure, refuseWhenClosed, SCHEDULER_STOPPED, type ConnectionHandle } from '../redis/owner-close.js';
import type { ScheduleDefinition } from './definition.js';

/**
 * The methods of the runtime schedule API, each refused by name once the scheduler's connection is
 * closed (here, and on the Nest `SchedulerService`, which offers the same methods).
 * @internal
 */
export const RUNTIME_API: ReadonlySet<string> = new Set([
  'addSchedule',
  'upsertSchedules',
  'addSchedules',
  'removeSchedules',
  'removeSchedule',
  'pauseSchedule',
  'resumeSchedule',
  'triggerNow',
]);

/**
 * The runtime API of a `Scheduler`: it writes through the Inspector's acts
 * (lib/core/admin/schedule-acts.ts), as the Inspector, the CLI and the console do: the same guard,
 * pause notes, fire history and `operator.acted` events (on the scheduler's bus, actor
 * `app:<instanceId>`), and the audit trail of the acts an Inspector records (pause, resume, trigger,
 * remove: origin `app <instanceId>`). No Inspector needs to exist.
 * @publicApi
 */
export abstract class ScheduleWrites {
  /** Id of this instance (see `Scheduler.instanceId`). */
  abstract readonly instanceId: string;
  /** The acts' context: the scheduler's connection and bus. @internal */
  protected abstract readonly admin: InspectorContext;
  /** The default time zone of definitions without one. @internal */
  protected abstract readonly timeZone: string;

  /**
   * The scheduler's connection: once the part of Chronos that opened it closed it (this scheduler's
   * `stop()`, or an Inspector whose `redis` it was given), every method below is refused by name
   * (owner-close.ts, the rule every Chronos object follows). A connection the app passed in is the
   * app's to close.
   * @internal
   */
  protected abstract readonly conn: ConnectionHandle;

  static {
    // after the owner closed the connection, a call names itself instead of meeting ioredis's bare
    // "Connection is closed." (before its arguments are looked at, as every Chronos object does)
    refuseWhenClosed(
      ScheduleWrites.prototype,
      (w) => ownerClosure(w.conn, SCHEDULER_STOPPED, 'this scheduler'),
      (name) => RUNTIME_API.has(name),
    );
  }

  /** Runs an act and records it in the audit trail, as the Inspector's acts are (audited.ts). */
  private act<T>(action: OperatorAction, target: AuditTarget, run: () => Promise<T>, count?: (r: T) => number | ActOutcome): Promise<T> {
    return audited(this.admin, `app ${this.instanceId}`, action, {}, target, run, count);
  }

  /**
   * Adds (or replaces) a schedule at run time. It lives in Redis, so the leader fires it whichever
   * instance added it; it is never orphaned. A schedule of that name declared in code is replaced
   * only with `opts.force`.
   * @throws InvalidScheduleError; ChronosStateError when a schedule of that name is declared in code
   *   and `force` is not set (nothing is written); InvalidOptionsError for `opts` that is not an
   *   object, has a key other than `force`, or a `force` that is not true or false.
   */
  async addSchedule(def: ScheduleDefinition, opts?: { force?: boolean }): Promise<void> {
    await acts.addSchedule(this.admin, def, this.timeZone, acts.writeOptions(opts, 'addSchedule').force);
  }

  /**
   * Adds or replaces many schedules at run time, ~125 per Redis call (pipelined). Every
   * definition is validated first (nothing is written when one is bad). An unchanged definition
   * (the same fingerprint) is a no-op: no write, no new generation. A changed one keeps its
   * registeredAt, pause and resume like {@link addSchedule}, takes a new generation and is fenced
   * (no trigger planned under its old definition is enqueued once this resolves). One change
   * notice for the call; no `operator.acted` (as addSchedule). A schedule declared in code is
   * replaced only with `opts.force`.
   * @returns counts of the added, changed and unchanged schedules.
   * @throws InvalidScheduleError naming the first bad definition and its `index` (or `defs` when it is
   *   not an array); DuplicateScheduleError when a name is given twice; ChronosStateError naming the
   *   code-declared ones left untouched when `force` is not set (the others are written);
   *   InvalidOptionsError for `opts` that is not an object, has a key other than `force`, or a
   *   `force` that is not true or false (nothing is written).
   */
  async upsertSchedules(defs: readonly ScheduleDefinition[], opts?: { force?: boolean }): Promise<UpsertSchedulesResult> {
    return bulk.upsertSchedules(this.admin, defs, this.timeZone, acts.writeOptions(opts, 'upsertSchedules').force);
  }

  /**
   * Adds the schedules whose names do not exist yet; existing ones are left untouched and listed
   * in `existing`. Otherwise as {@link upsertSchedules}.
   * @throws InvalidScheduleError naming the first bad definition and its `index`; DuplicateScheduleError
   */
  async addSchedules(defs: readonly ScheduleDefinition[]): Promise<AddSchedulesResult> {
    return bulk.addSchedules(this.admin, defs, this.timeZone);
  }

  /**
   * Removes many schedules (~125 per Redis call, pipelined), with the guarantee of
   * {@link removeSchedule} for each. Names not in the registry are listed in `missing`. When a
   * live instance declares any of them in code, the whole call is refused before anything is
   * removed, as removeSchedule refuses one, unless `force` (they come back when such an instance
   * restarts). Emits one `operator.acted` (`schedule.remove`, `count`) when it removed any.
   * @throws InvalidScheduleError for a bad name (with its `index`), or for `names` that is not an
   *   array; DuplicateScheduleError; ChronosStateError when a live instance declares one in code and
   *   `force` is not set; InvalidOptionsError for `opts` that is not an object, has a key other than
   *   `force`, or a `force` that is not true or false (nothing is removed).
   */
  async removeSchedules(
    names: readonly string[],
    opts?: {
      /** Remove even schedules a live instance declares in code. @defaultValue false */
      force?: boolean;
    },
  ): Promise<RemoveSchedulesResult> {
    const { force } = acts.writeOptions(opts, 'removeSchedules');
    // the names in the entry's detail (the first 10), so a bulk removal is found by what it removed;
    // names that are not an array are refused by the removal itself (in the audit trail as failed)
    const list = Array.isArray(names) ? names : [];
    const listed = list.slice(0, 10).join(', ') + (list.length > 10 ? ` and ${list.length - 10} more` : '');
    const detail = [listed, force ? 'force' : ''].filter(Boolean).join('; ') || undefined;
    const run = () => bulk.removeSchedules(this.admin, names, force);
    return this.act('schedule.remove', { schedule: list.length === 1 ? list[0] : undefined, detail }, run, (r) => r.removed);
  }

  /**
   * Removes a schedule from the registry: once this resolves no later trigger is enqueued (one
   * already enqueued ahead, ≤ 1 s, may still run). A schedule declared in code by a live instance
   * is refused (it would come back when that instance restarts): remove it from the code, or use
   * `Inspector.removeSchedule(name, { force: true })`. Emits `operator.acted` (`schedule.remove`).
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); ChronosStateError when a live instance declares it in code.
   */
  async removeSchedule(name: string): Promise<void> {
    await this.act('schedule.remove', { schedule: name }, () => acts.removeSchedule(this.admin, name));
  }

  /**
   * Pauses a schedule fleet-wide: its triggers are skipped, not postponed. Once this resolves no
   * later trigger is enqueued (one already enqueued ahead, ≤ 1 s, may still run). The Inspector
   * shows it paused by `app:<instanceId>`; emits `operator.acted` (`schedule.pause`). Safe to
   * repeat: a pause of a paused schedule changes nothing (count 0, audited `already paused`).
   * @returns true when it paused the schedule, false when it was paused already.
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
   */
  async pauseSchedule(name: string): Promise<boolean> {
    return this.act('schedule.pause', { schedule: name }, () => acts.pauseSchedule(this.admin, name), toggled('already paused'));
  }

  /**
   * Resumes a paused schedule: its first trigger is its first instant after the resume (the pause
   * note is dropped). Emits `operator.acted` (`schedule.resume`). Safe to repeat: a resume of a
   * schedule not paused changes nothing (count 0, audited `not paused`).
   * @returns true when it resumed the schedule, false when it was not paused.
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
   */
  async resumeSchedule(name: string): Promise<boolean> {
    return this.act('schedule.resume', { schedule: name }, () => acts.resumeSchedule(this.admin, name), toggled('not paused'));
  }

  /**
   * Enqueues one task of the schedule now, as `<name>:manual:<uuid>` at Redis time, without
   * shifting its cadence (lastFired is untouched); records a `manual` fire in its history and
   * emits `operator.acted` (`schedule.trigger`).
   * @returns the task id. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
   */
  async triggerNow(name: string): Promise<string> {
    return this.act(
      'schedule.trigger',
      { schedule: name },
      () => acts.triggerSchedule(this.admin, name),
      () => 1,
    );
  }
}
