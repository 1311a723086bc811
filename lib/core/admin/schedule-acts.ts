import { randomUUID } from 'node:crypto';
import { ChronosStateError, InvalidOptionsError, ScheduleNotFoundError } from '../runtime/errors.js';
import { encodeMeta } from '../queue/codec.js';
import { backfillScript } from '../redis/commands/admin.js';
import { scheduleAdminScript } from '../redis/commands/schedule.js';
import { databaseChecked } from '../redis/server-check.js';
import { entryFields, META, newMeta } from '../redis/protocol.js';
import { shardKeysFor } from '../redis/keys.js';
import { nearEpochProblem, OptionProblems } from '../runtime/options.js';
import { fireDedupTtlMs, storedSpec, triggerKey, type ScheduleDefinition, type StoredSchedule } from '../scheduler/definition.js';
import { toStored } from '../scheduler/definition-check.js';
import { recordFires } from '../scheduler/history.js';
import { encodeStored } from '../scheduler/stored-form.js';
import { dropStaleRuns, raiseFences } from '../scheduler/registry.js';
import { triggersBetween } from '../scheduler/spec.js';
import type { InspectorContext } from './context.js';
import { schedule, storedSchedule } from './schedules.js';
import type { BackfillResult } from './types.js';

/**
 * The operator's acts on schedules: the only code that changes the schedule registry on request
 * (the Inspector's, and the `Scheduler`'s runtime API, which delegates here with a context of its
 * own). Every registry change is two single-slot steps, in this order: schedule-admin.lua in the
 * slot of the schedule's shard (it takes a new generation, keeps the shard's due index and announces
 * the change: the shard's leader looks at it at once), then the fence in the slot of the queue the schedule targeted (scheduler/registry.ts
 * raiseFences): once the call resolves, fire.lua refuses any trigger planned under the old state,
 * even by a leader that missed the notice.
 */

/** Most triggers one backfill enqueues (a larger range is refused: split it). */
export const MAX_BACKFILL = 10_000;
/** Triggers per `backfill.lua` call. */
const BACKFILL_CHUNK = 250;

/**
 * Pauses, resumes or deletes a schedule (schedule-admin.lua, then the fence), then keeps the
 * operator's pause note (a pause) or drops it (a resume, a delete).
 * @returns false when a pause found it paused or a resume found it not paused: nothing was done
 *   (no generation, no fence, the note and who paused it kept); true otherwise
 * @throws ScheduleNotFoundError naming it; InvalidScheduleError for a name no schedule can have
 */
async function change(ctx: InspectorContext, op: 'delete' | 'pause' | 'resume', name: string, note = '', actor = ''): Promise<boolean> {
  const r = await scheduleAdminScript(ctx.client, ctx.shard(name), ctx.sched, op, name);
  if (r.status === 'notFound') throw new ScheduleNotFoundError(name);
  if (r.status === 'unchanged') return false;
  await raiseFences(ctx.client, ctx.namespace, [{ schedule: name, queue: r.previousQueue!, generation: r.generation }], actor);
  if (op === 'delete') {
    // its maxRuns count and its lastFired (after the fence, which reads it): a namesake added later starts afresh (trial 9)
    const k = ctx.keys(r.previousQueue!);
    await Promise.all([ctx.client.del(k.runs(name)), ctx.client.hdel(k.lastFired, name)]);
  }
  if (op === 'pause') await ctx.client.hset(ctx.sched.pauseNotes, name, JSON.stringify({ note, actor, at: r.redisNow }));
  else await ctx.client.hdel(ctx.sched.pauseNotes, name);
  return true;
}

/** The keys of {@link writeOptions}. */
const WRITE_KEYS: ReadonlySet<string> = new Set(['force']);

/**
 * The options `{ force?: boolean }` of a runtime schedule write (addSchedule, upsertSchedules,
 * removeSchedules; the Scheduler's, the Inspector's and the Nest SchedulerService's), checked once
 * per call; undefined is `{}`. A misspelt key (`forse`) would otherwise be an option silently not
 * applied.
 * @param call the call's name, for the message (`Invalid upsertSchedules options`)
 * @throws InvalidOptionsError naming the value when it is not an object, an unknown key, or a
 *   `force` that is not true or false.
 */
export function writeOptions(opts: unknown, call: string): { force: boolean } {
  if (opts === undefined) return { force: false };
  const p = new OptionProblems();
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) p.expected('', 'an object { force?: boolean }', opts);
  else {
    p.unknownKeys(opts, WRITE_KEYS);
    p.bool('force', (opts as { force?: unknown }).force);
  }
  p.throwIfAny(`${call} options`);
  return { force: (opts as { force?: boolean }).force === true };
}

/**
 * Adds (or replaces) a runtime schedule: validated, then schedule-admin.lua "put" (the change
 * notice), the fence of a replaced one in the queue it targeted, and one SADD of its queue (listed
 * by the Inspector from then on). It lives in Redis, so the leader fires it whichever instance
 * added it; never orphaned. A schedule of that name declared in code is replaced only with `force`.
 * @param defaultTimeZone zone of a cron spec that names none
 * @throws InvalidScheduleError naming the schedule and the bad spec, zone or option (a payload over
 *   the context's `maxPayloadBytes` too); ChronosStateError when a schedule of that name is declared in code and `force` is not set
 *   (nothing is written).
 */
export async function addSchedule(ctx: InspectorContext, def: ScheduleDefinition, defaultTimeZone: string, force = false): Promise<void> {
  const { stored } = toStored(def, defaultTimeZone, true, ctx.maxPayloadBytes);
  await databaseChecked(ctx.client);
  const r = await scheduleAdminScript(
    ctx.client,
    shardKeysFor(ctx.namespace, stored.name),
    ctx.sched,
    'put',
    stored.name,
    encodeStored(stored, ctx.compactSchedules),
    force,
  );
  if (r.status === 'declared') {
    throw new ChronosStateError(
      `Schedule "${stored.name}" is declared in code, not at run time: addSchedule left it untouched. ` +
        'Pass { force: true } to replace it (a declaring instance puts its code definition back when it registers again).',
    );
  }
  if (r.previousQueue !== undefined) {
    const fences = [{ schedule: stored.name, queue: r.previousQueue, generation: r.generation }];
    await raiseFences(ctx.client, ctx.namespace, fences);
    await dropStaleRuns(ctx.client, ctx.namespace, fences, () => stored);
  }
  await ctx.client.sadd(ctx.global.queues, stored.queue);
}

/** Longest pause note, characters (the console's limit on every text it is sent). */
export const PAUSE_NOTE_MAX = 1000;

/**
 * Pauses a schedule fleet-wide: its triggers are skipped while paused (counted and logged once at
 * the resume), keeping the operator's note (shown while it stays paused). Once this resolves no
 * later trigger is enqueued (one already enqueued ahead of its instant, ≤ 1 s, may still run).
 * One `schedule-admin.lua`, the fence, one HSET. Safe to repeat: a pause of a paused schedule
 * changes nothing (its note, who paused it and when are kept) and reports so.
 * @returns true when it paused the schedule, false when it was paused already (`operator.acted` count 1 or 0)
 * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for a note that is not a string of at most `PAUSE_NOTE_MAX` (1,000) characters
 */
export async function pauseSchedule(ctx: InspectorContext, name: string, note?: string, actor?: string): Promise<boolean> {
  if (note !== undefined && (typeof note !== 'string' || note.length > PAUSE_NOTE_MAX)) {
    const got = typeof note === 'string' ? `${note.length} characters` : JSON.stringify(note);
    throw new InvalidOptionsError([`note: expected a string of at most ${PAUSE_NOTE_MAX} characters, got ${got}`], 'pause options');
  }
  const paused = await change(ctx, 'pause', name, note ?? '', actor ?? ctx.actor);
  ctx.emit('schedule.pause', actor, { schedule: name, count: paused ? 1 : 0 });
  return paused;
}

/**
 * Resumes a paused schedule (its note is dropped): its first trigger is its first instant after
 * the resume. One `schedule-admin.lua`, the fence, one HDEL. Safe to repeat: a resume of a
 * schedule not paused changes nothing (its cadence and any trigger still to catch up are kept) and reports so.
 * @returns true when it resumed the schedule, false when it was not paused (`operator.acted` count 1 or 0)
 * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
 */
export async function resumeSchedule(ctx: InspectorContext, name: string, actor?: string): Promise<boolean> {
  const resumed = await change(ctx, 'resume', name);
  ctx.emit('schedule.resume', actor, { schedule: name, count: resumed ? 1 : 0 });
  return resumed;
}

/**
 * Removes a schedule from the registry: once this resolves no trigger of it is enqueued any more
 * (one already enqueued ahead of its instant, ≤ 1 s, may still run). A code-declared schedule that
 * a live instance still declares is refused unless `force` (it would come back when that instance
 * restarts or re-publishes): remove runtime or orphaned ones. Cost: the schedule read
 * ({@link schedule}), one script, the fence, one HDEL.
 * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); ChronosStateError when live instances declare it and `force` is not set.
 */
export async function removeSchedule(ctx: InspectorContext, name: string, force = false, actor?: string): Promise<void> {
  const s = await schedule(ctx, name, 1);
  const live = s.declaredBy.filter((d) => d.alive).map((d) => d.instance);
  if (!s.runtime && live.length > 0 && !force) {
    throw new ChronosStateError(
      `Schedule "${name}" is declared in code by live instance(s) ${live.join(', ')}: it would come back when one of them restarts. ` +
        'Remove it from the code, or force the removal (CLI: --force).',
    );
  }
  await change(ctx, 'delete', name);
  ctx.emit('schedule.remove', actor, { schedule: name, count: 1 });
}

/**
 * The JSON meta of a task of schedule `s` enqueued at `enqueuedAt` for its trigger `triggerAt`
 * (epoch ms): its schedule, instant and group, as a fired trigger's (fire-triggers.ts).
 */
function triggerMeta(s: StoredSchedule, enqueuedAt: number, triggerAt: number): string {
  const meta = newMeta(s.maxRetry, s.timeoutMs, enqueuedAt);
  meta[META.schedule] = s.name;
  meta[META.triggerAt] = triggerAt;
  if (s.group !== undefined) meta[META.group] = s.group;
  return encodeMeta(meta);
}

/**
 * Enqueues one task of the schedule now, as `<name>:manual:<uuid>` (`schedule`/`triggerAt` set),
 * without shifting its cadence (lastFired untouched), and records a `manual` fire. Cost: HGET, TIME,
 * XADD, SADD, the history pipeline.
 * @returns the task id. @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`)
 */
export async function triggerSchedule(ctx: InspectorContext, name: string, actor?: string): Promise<string> {
  const s = await storedSchedule(ctx, name);
  const k = ctx.keys(s.queue);
  const now = await ctx.redisNow();
  const id = `${name}:manual:${randomUUID()}`;
  await ctx.client.xadd(k.stream, '*', ...entryFields(id, s.type, s.payload, triggerMeta(s, now, now)));
  await ctx.client.sadd(ctx.global.queues, s.queue);
  await recordFires(ctx.client, k, [{ schedule: name, triggerAt: now, at: now, outcome: 'manual', taskId: id, by: actor ?? ctx.actor }]);
  ctx.emit('schedule.trigger', actor, { schedule: name, queue: s.queue, taskId: id, count: 1 });
  return id;
}

/**
 * Enqueues every trigger of the schedule in [fromMs, toMs] (epoch ms; `toMs` is capped at Redis
 * time now) that was never fired, each once by its dedup key `<schedule>:<trigger-unix>` (skipped by
 * the pause or the catch-up policy, or missed while nobody led: enqueued; skipped or buffered by the
 * overlap policy: fired, since fire.lua takes the dedup key before the overlap decision)
 * (`backfill.lua`, 250 triggers per call), and reports how many were new. lastFired and the
 * overlap policy are left alone. A trigger older than its dedup key's lifetime (≥ 1 h, see
 * `fireDedupTtlMs`) cannot be told from one never fired, and is enqueued.
 * @throws ScheduleNotFoundError; InvalidScheduleError for a name no schedule can have (`null`, `'a b'`); InvalidOptionsError for a reversed range, an end before 1973-03-03 (epoch seconds given as ms) or more than {@link MAX_BACKFILL} triggers.
 */
export async function backfillSchedule(
  ctx: InspectorContext,
  name: string,
  fromMs: number,
  toMs: number,
  actor?: string,
): Promise<BackfillResult> {
  const what = `backfill of "${name}"`;
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || fromMs > toMs) {
    throw new InvalidOptionsError([`range: expected from <= to (epoch ms), got from=${String(fromMs)} to=${String(toMs)}`], what);
  }
  const s = await storedSchedule(ctx, name);
  // epoch seconds read as ms backfilled January 1970 (nothing, or a count "over the limit" for a range reaching now)
  const near = Object.entries({ from: fromMs, to: toMs }).flatMap(([k, ms]) => {
    const problem = nearEpochProblem(ms, ms);
    return problem === undefined ? [] : [`${k}: ${problem}`];
  });
  if (near.length > 0) throw new InvalidOptionsError(near, what);
  const spec = storedSpec(s);
  const now = await ctx.redisNow();
  const { triggers, skipped } = triggersBetween(spec, fromMs - 1, Math.min(toMs, now), MAX_BACKFILL);
  if (skipped > 0) {
    const count = triggers.length + skipped;
    throw new InvalidOptionsError([`the range holds at least ${count} triggers, more than ${MAX_BACKFILL}: split it`], what);
  }
  const k = ctx.keys(s.queue);
  const ttl = fireDedupTtlMs(s, spec);
  const ids: string[] = [];
  for (let c = 0; c < triggers.length; c += BACKFILL_CHUNK) {
    const chunk = triggers.slice(c, c + BACKFILL_CHUNK).map((t) => ({ taskId: triggerKey(name, t), meta: triggerMeta(s, now, t) }));
    ids.push(...(await backfillScript(ctx.client, k, { type: s.type, payload: s.payload, dedupTtlMs: ttl, triggers: chunk })));
  }
  if (ids.length > 0) {
    await ctx.client.sadd(ctx.global.queues, s.queue);
    const by = actor ?? ctx.actor;
    const added = new Set(ids);
    const records = triggers.filter((t) => added.has(triggerKey(name, t)));
    const outcome = 'backfill' as const;
    const fires = records.map((t) => ({ schedule: name, triggerAt: t, at: now, taskId: triggerKey(name, t), by, outcome }));
    await recordFires(ctx.client, k, fires);
  }
  ctx.emit('schedule.backfill', actor, { schedule: name, queue: s.queue, count: ids.length });
  return { triggers: triggers.length, enqueued: ids.length, duplicates: triggers.length - ids.length, ids: ids.slice(0, 1000) };
}
