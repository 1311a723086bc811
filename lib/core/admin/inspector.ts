import { DEFAULTS } from '../runtime/defaults.js';
import { closedByOwner, refuseWhenClosed, sharedClosure } from '../redis/owner-close.js';
import type { ScheduleDefinition } from '../scheduler/definition.js';
import { QueueInspector } from './inspector-queues.js';
import * as fleet from './fleet.js';
import * as act from './schedule-activity.js';
import * as au from './audit.js';
import { actOptions, toggled } from './audited.js';
import type { AuditPage, AuditQuery } from './audit.js';
import * as sa from './schedule-acts.js';
import * as s from './schedules.js';
import { schedulePage, type SchedulePage, type SchedulePageQuery } from './schedule-page.js';
import type {
  ActOptions,
  BackfillResult,
  FireInfo,
  InstanceInfo,
  LeaderInfo,
  RedisInfo,
  ScheduleActivity,
  ScheduleInfo,
  ServerInfo,
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
 * `actor`. Every act's options (`{ actor?, origin? }` and its own keys) are checked before it runs:
 * `null`, a non-object, an unknown key (a misspelt filter key such as `typ`), an empty `actor` or a
 * `force` not true or false is an `InvalidOptionsError` naming the value, and nothing is done or
 * recorded. Instants are epoch ms, durations ms. The Redis cost of every call is in its docstring.
 * Once its connection was closed by the part that opened it (its own `close()`; a QueueClient's
 * whose connection it shares, in a Nest app at `app.close()`), every call rejects with a
 * `ChronosStateError` naming the call; a connection the user passed in is never closed by Chronos.
 * @publicApi
 */
export class Inspector extends QueueInspector {
  // ---------------------------------------------------------------- schedules

  /**
   * Every schedule: spec, zone, next `n` triggers, last fired, paused with its note, origin, the
   * instances declaring it with liveness, orphaned (with `orphanedSince`); all of them, sorted
   * by name in code-unit order (`B` before `a`, as {@link schedulePage} pages them). Cost, in calls of at most 1,000 names or fields each: HSCAN of the registry and the pause
   * notes, ZRANGE + TIME, MGET of the instances' declarations, then one pipeline of SMISMEMBER per
   * distinct declaration and HMGET of lastFired per target queue, and HMGET of the orphaned ones'
   * orphaned-since instants (none when none is orphaned). No call walks a whole set or hash (10,000 schedules:
   * about 30 calls, none over a millisecond of Redis).
   * @throws InvalidOptionsError for an `n` that is not an integer 0-1000.
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

  /** One schedule (see {@link schedules}). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for an `n` not an integer 0-1000 */
  schedule(name: string, n = 5): Promise<ScheduleInfo> {
    return s.schedule(this.ctx, name, n);
  }

  /**
   * The last `limit` fires of a schedule, newest first (at most 100 kept, or the scheduler option
   * `historyLimit`: none when it is 0), each with its outcome and where its task is now. Cost: HGET, LRANGE, ZSCORE ×3 per task (pipelined), and a bounded look
   * through the stream. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`);
   *   InvalidOptionsError for a `limit` that is not an integer ≥ 1.
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
   * @throws InvalidScheduleError; ChronosStateError when it is declared in code and `force` is not set (nothing is written);
   *   InvalidOptionsError for `opts` that is not an object, has a key other than `force`, or a `force` not true or false
   */
  async addSchedule(def: ScheduleDefinition, defaultTimeZone: string = DEFAULTS.timeZone, opts?: { force?: boolean }): Promise<void> {
    return sa.addSchedule(this.ctx, def, defaultTimeZone, sa.writeOptions(opts, 'addSchedule').force);
  }

  /**
   * Pauses a schedule fleet-wide, with an optional note (at most 1,000 characters). One script.
   * Safe to repeat: a pause of a paused schedule changes nothing (its note and who paused it are
   * kept), recorded `done` with count 0 and detail `already paused`, `operator.acted` count 0.
   * @returns true when it paused the schedule, false when it was paused already.
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for a longer note
   */
  async pauseSchedule(name: string, options?: { note?: string } & ActOptions): Promise<boolean> {
    const opts = actOptions(options, 'pauseSchedule', ['note']);
    return this.rec(
      'schedule.pause',
      opts,
      { schedule: name, detail: opts.note },
      () => sa.pauseSchedule(this.ctx, name, opts.note, opts.actor),
      toggled('already paused'),
    );
  }

  /**
   * Resumes a paused schedule. One script. Safe to repeat: a resume of a schedule not paused
   * changes nothing, recorded `done` with count 0 and detail `not paused`, `operator.acted` count 0.
   * @returns true when it resumed the schedule, false when it was not paused.
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
   */
  async resumeSchedule(name: string, options?: ActOptions): Promise<boolean> {
    const opts = actOptions(options, 'resumeSchedule');
    return this.rec(
      'schedule.resume',
      opts,
      { schedule: name },
      () => sa.resumeSchedule(this.ctx, name, opts.actor),
      toggled('not paused'),
    );
  }

  /** Enqueues one task of the schedule now, cadence untouched. @returns the task id. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`) */
  async triggerSchedule(name: string, options?: ActOptions): Promise<string> {
    const opts = actOptions(options, 'triggerSchedule');
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
   * `force`). @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); ChronosStateError
   */
  async removeSchedule(name: string, options?: { force?: boolean } & ActOptions): Promise<void> {
    const opts = actOptions(options, 'removeSchedule', ['force']);
    const detail = opts.force ? 'force' : undefined;
    return this.rec('schedule.remove', opts, { schedule: name, detail }, () => sa.removeSchedule(this.ctx, name, opts.force, opts.actor));
  }

  /**
   * Enqueues each trigger in [fromMs, toMs] never fired, once, by its dedup key (a trigger the overlap
   * policy skipped or buffered was fired; one the pause or the catch-up policy skipped was not); reports
   * how many were new. At most 10,000 triggers; 250 per script call. `fromMs`, `toMs`: epoch ms.
   * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError
   *   for bad options, a reversed range, an end before 1973-03-03 (epoch seconds given as ms: it names the ms meant) or more than 10,000 triggers
   */
  async backfillSchedule(name: string, fromMs: number, toMs: number, options?: ActOptions): Promise<BackfillResult> {
    const opts = actOptions(options, 'backfillSchedule');
    // an instant no Date can show (NaN, 1e20) is named as given: backfillSchedule refuses it (InvalidOptionsError), the audit records that
    const shown = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms));
    const detail = `${shown(fromMs)} … ${shown(toMs)}`;
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
   * `XREVRANGE … COUNT` (at most 2,000 entries looked at when filtering: a filtered page may be empty with a
   * `cursor`, more to look at). @throws InvalidOptionsError for a bad limit or cursor, or a filter no entry can
   * have (an unknown action or result, a queue or schedule name none can have, an empty actor)
   */
  audit(query: AuditQuery = {}): Promise<AuditPage> {
    return au.readAudit(this.ctx, query);
  }

  // ---------------------------------------------------------------- fleet

  /**
   * The shards' leaders (each shard's instance, term and TTL left) and the instance leading the most
   * of them, or null when no shard is led. One pipeline (HGETALL of the shard leases, TIME): no MULTI, so it answers while Redis is over maxmemory.
   */
  leader(): Promise<LeaderInfo | null> {
    return fleet.leader(this.ctx);
  }

  /**
   * The worker servers, each `live` or `overdue` (its presence passed; with the entries it holds): those
   * whose heartbeat is on time, and past it those that still hold entries. One pipeline (ZRANGE, a GET and
   * a ZSCORE per server), and while a server is overdue one XPENDING per queue it serves.
   */
  servers(): Promise<ServerInfo[]> {
    return fleet.servers(this.ctx);
  }

  /** Redis version, mode, role, memory and eviction policy (warning unless `noeviction`). One INFO. */
  redisInfo(): Promise<RedisInfo> {
    return fleet.redisInfo(this.ctx);
  }
}

// after the owner closed the connection, a call names itself instead of meeting ioredis's bare "Connection is closed." (trial 32)
const INSPECTOR_CLOSED = sharedClosure('this Inspector');
refuseWhenClosed(
  Inspector.prototype,
  (i) => (closedByOwner(i.redis) ? INSPECTOR_CLOSED : undefined),
  (name) => name !== 'close' && name !== 'rec',
);
